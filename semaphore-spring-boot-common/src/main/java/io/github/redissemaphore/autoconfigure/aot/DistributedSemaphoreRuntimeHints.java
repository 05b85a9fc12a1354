package io.github.redissemaphore.autoconfigure.aot;

import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.aspect.DistributedSemaphoreAspect;
import io.github.redissemaphore.autoconfigure.DistributedSemaphoreProperties;
import io.github.redissemaphore.autoconfigure.SemaphoreName;
import io.github.redissemaphore.autoconfigure.SemaphoreNameValidator;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.aspectj.lang.annotation.Around;
import org.jspecify.annotations.Nullable;
import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.MemberCategory;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.boot.context.properties.bind.BindableRuntimeHintsRegistrar;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * What the starter itself reads or calls reflectively, for a GraalVM native image: the advice
 * method of the {@link DistributedSemaphoreAspect} (called by Spring AOP), the attributes of
 * {@link DistributedSemaphore} and {@link SemaphoreName}, the binding of
 * {@link DistributedSemaphoreProperties} with its nested records, and what Bean Validation needs
 * to check them: their fields and accessors, and the validator it instantiates for
 * {@code @SemaphoreName}.
 *
 * <p>Spring's own AOT processors register most of this too when they see the beans at build time;
 * these hints make the starter's needs hold whichever way the beans were declared. The methods of
 * the application's guarded beans are registered by {@link GuardedMethodsAotProcessor}.
 */
class DistributedSemaphoreRuntimeHints implements RuntimeHintsRegistrar {

    /** The class the auto-configuration requires before it creates the aspect. */
    private static final String ASPECTJ_WEAVER = "org.aspectj.weaver.Advice";

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        if (ClassUtils.isPresent(ASPECTJ_WEAVER, classLoader)) {
            ReflectionUtils.doWithMethods(DistributedSemaphoreAspect.class,
                    advice -> hints.reflection().registerMethod(advice, ExecutableMode.INVOKE),
                    method -> method.isAnnotationPresent(Around.class));
        }
        hints.reflection().registerType(DistributedSemaphore.class, MemberCategory.INVOKE_PUBLIC_METHODS);
        hints.reflection().registerType(SemaphoreName.class, MemberCategory.INVOKE_PUBLIC_METHODS);
        hints.reflection().registerType(SemaphoreNameValidator.class, MemberCategory.INVOKE_DECLARED_CONSTRUCTORS);
        BindableRuntimeHintsRegistrar.forTypes(DistributedSemaphoreProperties.class).registerHints(hints, classLoader);
        for (Class<?> validated : validatedTypes()) {
            // DECLARED_FIELDS, not Spring Framework 7's ACCESS_DECLARED_FIELDS: 6.2 has only the former,
            // which 7 still reads as field access
            hints.reflection().registerType(validated, MemberCategory.DECLARED_FIELDS,
                    MemberCategory.INVOKE_PUBLIC_METHODS);
        }
    }

    /** @return the properties record and the records nested in it, whose components carry constraints */
    static List<Class<?>> validatedTypes() {
        List<Class<?>> types = new ArrayList<>();
        types.add(DistributedSemaphoreProperties.class);
        Arrays.stream(DistributedSemaphoreProperties.class.getDeclaredClasses()).filter(Class::isRecord)
                .forEach(types::add);
        return types;
    }
}
