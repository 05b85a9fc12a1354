package io.github.redissemaphore.aspect;

import java.util.ArrayList;
import java.util.List;

import org.springframework.core.ReactiveAdapterRegistry;
import org.springframework.util.ClassUtils;

/**
 * The guards for the result types the class path allows, in the order they are asked: the first
 * that supports a method guards it. Guards that need Reactor (or Kotlin's coroutines on Reactor)
 * are made only when it is there, so the aspect loads and works without it.
 */
final class ResultGuards {

    private static final ClassLoader LOADER = ResultGuards.class.getClassLoader();
    private static final boolean REACTOR_PRESENT = ClassUtils.isPresent("reactor.core.publisher.Flux", LOADER);
    /** The condition under which Spring AOP calls a suspend function through a publisher. */
    private static final boolean COROUTINES_REACTOR_PRESENT = REACTOR_PRESENT
            && ClassUtils.isPresent("kotlinx.coroutines.reactor.MonoKt", LOADER);

    /** What the aspect can hold for, in a refusal. */
    static final String SUPPORTED = "return a plain value, a CompletableFuture or CompletionStage, or (with "
            + "reactor-core on the class path) a Mono, a Flux or any type Spring's ReactiveAdapterRegistry adapts: "
            + "RxJava 3, Kotlin Flow, Mutiny; a suspend function needs kotlinx-coroutines-reactor";

    private ResultGuards() {
    }

    /** @return the guards, most specific first, the blocking one last */
    static List<ResultGuard> available(AsyncAcquisition acquisition) {
        List<ResultGuard> guards = new ArrayList<>();
        guards.add(new CompletionStageGuard(acquisition));
        if (REACTOR_PRESENT) {
            ReactiveHold hold = new ReactiveHold(acquisition);
            guards.add(new ReactorGuard(hold));
            if (COROUTINES_REACTOR_PRESENT) {
                guards.add(new SuspendingFunctionGuard(hold));
            }
            guards.add(new ReactiveAdapterGuard(ReactiveAdapterRegistry.getSharedInstance(), hold));
        }
        guards.add(new BlockingGuard());
        return guards;
    }
}
