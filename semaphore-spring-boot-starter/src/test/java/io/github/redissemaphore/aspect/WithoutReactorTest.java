package io.github.redissemaphore.aspect;

import java.io.IOException;
import java.io.InputStream;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

import org.junit.jupiter.api.Test;
import org.springframework.core.Ordered;
import org.springframework.core.env.PropertyResolver;
import org.springframework.core.env.StandardEnvironment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Reactor is optional: the aspect must load and work when it is absent, so only
 * {@link ReactorGuard} may touch it, and only when Reactor is there.
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
                .doesNotContain(ReactorGuard.class.getName());
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
