package io.github.redissemaphore.aspect;

import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.function.Predicate;

import io.reactivex.rxjava3.core.Single;
import kotlin.coroutines.Continuation;

import org.junit.jupiter.api.Test;
import org.springframework.core.Ordered;
import org.springframework.core.env.PropertyResolver;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Reactor is optional: the aspect must load and work when it is absent, so only the guards of
 * reactive results may touch it, and only when Reactor is there. Without them, a result that
 * completes later is refused, never run unguarded.
 */
class WithoutReactorTest {

    @Test
    void theAspectLoadsAndGuardsPlainAndCompletableResultsWithoutReactor() throws Exception {
        HidingReactor loader = new HidingReactor(getClass().getClassLoader());
        assertThatExceptionOfType(ClassNotFoundException.class)
                .isThrownBy(() -> loader.loadClass("reactor.core.publisher.Mono"));

        Class<?> aspectType = loader.loadClass(DistributedSemaphoreAspect.class.getName());
        assertThat(aspectType.getClassLoader()).isSameAs(loader);
        Object aspect = aspectType
                .getConstructor(loader.loadClass("io.github.redissemaphore.core.SemaphoreRegistry"),
                        PropertyResolver.class, Executor.class, int.class)
                .newInstance(null, new StandardEnvironment(), (Executor) Runnable::run, Ordered.LOWEST_PRECEDENCE);

        assertThat(((Ordered) aspect).getOrder()).isEqualTo(Ordered.LOWEST_PRECEDENCE);
        assertThat(loader.loaded).contains(BlockingGuard.class.getName(), CompletionStageGuard.class.getName())
                .doesNotContain(ReactorGuard.class.getName(), ReactiveHold.class.getName(),
                        ReactiveAdapterGuard.class.getName(), SuspendingFunctionGuard.class.getName());
    }

    @Test
    void withoutReactorRxJavaResultsSuspendFunctionsAndFlowsAreRefusedNotRunUnguarded() throws Exception {
        HidingReactor loader = new HidingReactor(getClass().getClassLoader());
        Class<?> acquisitionType = loader.loadClass(AsyncAcquisition.class.getName());
        Constructor<?> acquisition = acquisitionType.getDeclaredConstructor(Executor.class);
        acquisition.setAccessible(true);
        Method available = loader.loadClass(ResultGuards.class.getName()).getDeclaredMethod("available",
                acquisitionType);
        available.setAccessible(true);
        List<?> guards = (List<?>) available.invoke(null, acquisition.newInstance((Executor) Runnable::run));
        Method supports = loader.loadClass(ResultGuard.class.getName()).getDeclaredMethod("supports", Method.class);
        supports.setAccessible(true);

        Predicate<Method> guarded = method -> guards.stream().anyMatch(guard -> {
            try {
                return (Boolean) supports.invoke(guard, method);
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        });
        assertThat(guarded).accepts(Service.class.getMethod("plain"))
                .rejects(Service.class.getMethod("single"),
                        CoroutineAspectTest.CoroutineService.class.getMethod("work", int.class, Continuation.class),
                        CoroutineAspectTest.CoroutineService.class.getMethod("numbers", int.class));
    }

    /** Methods whose results the guards are asked about. */
    interface Service {

        String plain();

        Single<String> single();
    }

    /** Loads our classes itself (so they see what it hides) and hides Reactor and Reactive Streams. */
    private static final class HidingReactor extends ClassLoader {

        private static final List<String> HIDDEN = List.of("reactor.", "org.reactivestreams.");
        private final Set<String> loaded = ConcurrentHashMap.newKeySet();

        HidingReactor(ClassLoader parent) {
            super(parent);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (HIDDEN.stream().anyMatch(name::startsWith)) {
                throw new ClassNotFoundException(name + " is hidden by this test");
            }
            if (!name.startsWith("io.github.redissemaphore.")) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> type = findLoadedClass(name);
                if (type == null) {
                    type = define(name);
                }
                return type;
            }
        }

        private Class<?> define(String name) throws ClassNotFoundException {
            try (InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
                if (in == null) {
                    throw new ClassNotFoundException(name);
                }
                byte[] bytes = in.readAllBytes();
                loaded.add(name);
                return defineClass(name, bytes, 0, bytes.length);
            } catch (IOException e) {
                throw new ClassNotFoundException(name, e);
            }
        }

        @Override
        public InputStream getResourceAsStream(String name) {
            return getParent().getResourceAsStream(name);
        }
    }
}
