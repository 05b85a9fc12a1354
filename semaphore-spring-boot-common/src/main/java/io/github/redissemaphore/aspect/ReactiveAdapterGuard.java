package io.github.redissemaphore.aspect;

import java.lang.reflect.Method;
import java.util.Objects;

import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.core.KotlinDetector;
import org.springframework.core.ReactiveAdapter;
import org.springframework.core.ReactiveAdapterRegistry;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Every other result type Spring's {@link ReactiveAdapterRegistry} adapts to a Reactive Streams
 * publisher and back: RxJava 3 {@code Single}, {@code Maybe}, {@code Completable},
 * {@code Flowable} and {@code Observable}, Kotlin {@code Flow} and {@code Deferred}, Mutiny
 * {@code Uni} and {@code Multi}, {@code java.util.concurrent.Flow.Publisher}, whatever the
 * application registers. The result goes to a publisher, is held there like a {@code Mono} or
 * {@code Flux} ({@link ReactiveHold}), and comes back as the declared type. Used only when Reactor
 * is present.
 */
final class ReactiveAdapterGuard implements ResultGuard {

    /** By name: Kotlin may be absent. It is "deferred" for the registry, but runs from the start. */
    private static final String KOTLIN_DEFERRED = "kotlinx.coroutines.Deferred";

    private final ReactiveAdapterRegistry adapters;
    private final ReactiveHold hold;

    ReactiveAdapterGuard(ReactiveAdapterRegistry adapters, ReactiveHold hold) {
        this.adapters = adapters;
        this.hold = hold;
    }

    /** A type the registry adapts, and whose adapter gives back a value the method may return. */
    @Override
    public boolean supports(Method method) {
        return !KotlinDetector.isSuspendingFunction(method) && adapter(method.getReturnType()) != null;
    }

    private @Nullable ReactiveAdapter adapter(Class<?> returnType) {
        ReactiveAdapter adapter = adapters.getAdapter(returnType);
        return adapter != null && returnType.isAssignableFrom(adapter.getReactiveType()) ? adapter : null;
    }

    @Override
    public @Nullable Object guard(SemaphoreCall call) throws Throwable {
        // canHandle() found the adapter already
        ReactiveAdapter adapter = Objects.requireNonNull(adapter(call.method().getReturnType()), "adapter");
        Publisher<?> work;
        if (startsAtOnce(adapter)) {
            // the method's work begins when it is called: call it only once the permit is held
            work = adapter.isMultiValue() ? Flux.defer(() -> publisher(call, adapter))
                    : Mono.defer(() -> Mono.from(publisher(call, adapter)));
        } else {
            // the method only assembles; the work happens on subscription, under the permit
            Object result = call.proceed();
            if (result == null) {
                return null;
            }
            work = adapter.toPublisher(result);
        }
        return adapter.fromPublisher(hold.hold(call, work, adapter::toPublisher));
    }

    private static boolean startsAtOnce(ReactiveAdapter adapter) {
        return !adapter.getDescriptor().isDeferred() || adapter.getReactiveType().getName().equals(KOTLIN_DEFERRED);
    }

    private static Publisher<?> publisher(SemaphoreCall call, ReactiveAdapter adapter) {
        try {
            return adapter.toPublisher(call.proceed());
        } catch (Throwable e) {
            return Flux.error(e);
        }
    }
}
