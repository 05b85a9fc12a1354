package io.github.redissemaphore.autoconfigure.aot;

import io.github.redissemaphore.actuate.SemaphoresEndpoint;

import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.annotation.ReflectiveRuntimeHintsRegistrar;
import org.springframework.util.ClassUtils;

/**
 * The {@link SemaphoresEndpoint} in a GraalVM native image, when Actuator is on the class path:
 * its operations are called reflectively and their responses are written by Jackson. Its
 * operation annotations carry Spring Boot's own rules for that ({@code @Reflective} with Boot's
 * operation processor: invocation of the operation, binding of the response types and of the
 * types they hold), which are applied here as Boot applies them to an endpoint bean. Those rules
 * bind the declared return type only, so the records behind {@link SemaphoresEndpoint.SemaphoreView}
 * (a semaphore, or a cap) are bound here as well.
 */
class SemaphoresEndpointRuntimeHints implements RuntimeHintsRegistrar {

    /** Actuator is optional for the starter; without it there is no endpoint. */
    private static final String ACTUATOR_ENDPOINT = "org.springframework.boot.actuate.endpoint.annotation.Endpoint";

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        if (ClassUtils.isPresent(ACTUATOR_ENDPOINT, classLoader)) {
            new ReflectiveRuntimeHintsRegistrar().registerRuntimeHints(hints, SemaphoresEndpoint.class);
            new BindingReflectionHintsRegistrar().registerReflectionHints(hints.reflection(),
                    SemaphoresEndpoint.SemaphoreView.class.getPermittedSubclasses());
        }
    }
}
