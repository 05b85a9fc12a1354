package io.github.redissemaphore.test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.junit.jupiter.api.extension.ExtensionContext.Store;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit extension behind {@link RedisTest}: resolves {@link RedisServer} and {@link RedisCluster}
 * parameters of constructors, test methods and lifecycle methods.
 *
 * <ul>
 * <li>{@code RedisServer}: one per (top-level) test class, found or started on first use as
 *     {@link RedisServers#open()} does, closed after the class's last test;</li>
 * <li>{@code RedisCluster}: one 3-master cluster per test class, started on first use, closed after
 *     the class;</li>
 * <li>{@code @Dedicated RedisServer} / {@code @Dedicated RedisCluster}: a fresh one started by
 *     {@link RedisServers#start()} / {@link RedisCluster#start()}, closed with the test.</li>
 * </ul>
 *
 * <p>Tests write only keys under the server's {@link RedisServer#keyPrefix() key prefix}. Before
 * each test method the class's server, if already created, gets back in shape (on an owned server
 * a stopped process is restarted, a pause lifted) and loses the keys under its prefix
 * ({@link RedisServer#deleteOwnKeys()}, never {@code FLUSHALL}): one code path for a server of the
 * support and a REDIS_URL server alike, so every build runs the tests the way they run next to
 * someone's data. On an owned server a test that wrote a key outside the prefix fails after it
 * (the key is deleted), so such a test is caught on every build, not first on someone's data.
 * The cluster, always started by the support, is healed and flushed ({@code FLUSHALL}).
 *
 * <p>After each test, the connection factories the test created on them (in {@code @BeforeEach}
 * methods or the test itself) are destroyed, so a class of many tests does not pile up Lettuce
 * clients; those created in constructors, {@code @BeforeAll} or earlier tests' instances live until
 * the class ends. Test methods of one class must not run concurrently: they share a server whose
 * keys are deleted before each of them.
 *
 * <p>Resources live in the JUnit extension store, which closes {@link AutoCloseable} values (JUnit
 * 6 closes those natively; {@code Store.CloseableResource} is deprecated), also when tests fail.
 */
public final class RedisExtension implements ParameterResolver, BeforeEachCallback, AfterEachCallback {

    private static final Namespace NAMESPACE = Namespace.create(RedisExtension.class);
    private static final String FACTORY_MARKS = "factory-marks";

    @Override
    public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        Class<?> type = parameterContext.getParameter().getType();
        return type == RedisServer.class || type == RedisCluster.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
        Class<?> type = parameterContext.getParameter().getType();
        if (parameterContext.isAnnotated(Dedicated.class)) {
            AutoCloseable dedicated = type == RedisServer.class ? RedisServers.start() : RedisCluster.start();
            // A key of its own: several @Dedicated parameters of one method get one each.
            extensionContext.getStore(NAMESPACE).put(new Object(), dedicated);
            return dedicated;
        }
        Store classStore = classStore(extensionContext);
        if (type == RedisServer.class) {
            // A new handle's prefix is new: nothing under it yet, nothing to delete.
            return classStore.computeIfAbsent(RedisServer.class, key -> RedisServers.open(), RedisServer.class);
        }
        return classStore.computeIfAbsent(RedisCluster.class, key -> RedisCluster.start(), RedisCluster.class);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        Store classStore = classStore(context);
        Map<Class<?>, Integer> marks = new HashMap<>();
        RedisServer server = classStore.get(RedisServer.class, RedisServer.class);
        if (server != null) {
            server.heal();
            server.deleteOwnKeys();
            marks.put(RedisServer.class, server.factoryMark());
        }
        RedisCluster cluster = classStore.get(RedisCluster.class, RedisCluster.class);
        if (cluster != null) {
            cluster.heal();
            cluster.flushAll();
            marks.put(RedisCluster.class, cluster.factoryMark());
        }
        context.getStore(NAMESPACE).put(FACTORY_MARKS, marks);
    }

    @Override
    @SuppressWarnings("unchecked")
    public void afterEach(ExtensionContext context) {
        Map<Class<?>, Integer> marks = context.getStore(NAMESPACE).remove(FACTORY_MARKS, Map.class);
        Store classStore = classStore(context);
        // Created during this test when absent from the marks: all its factories are the test's.
        RedisServer server = classStore.get(RedisServer.class, RedisServer.class);
        if (server != null) {
            server.destroyFactoriesSince(marks == null ? 0 : marks.getOrDefault(RedisServer.class, 0));
        }
        RedisCluster cluster = classStore.get(RedisCluster.class, RedisCluster.class);
        if (cluster != null) {
            cluster.destroyFactoriesSince(marks == null ? 0 : marks.getOrDefault(RedisCluster.class, 0));
        }
        if (server != null && server.owned() && server.isRunning()) {
            failOnKeysOutsidePrefix(server);
        }
    }

    /** On a REDIS_URL server such keys could be someone's: a test must keep to its prefix everywhere. */
    private static void failOnKeysOutsidePrefix(RedisServer server) {
        List<String> strays = server.keysOutsidePrefix();
        if (!strays.isEmpty()) {
            strays.forEach(key -> server.admin("UNLINK", key));
            throw new AssertionError("the test wrote keys outside its prefix " + server.keyPrefix() + ": " + strays
                    + "; use server.keyPrefix() (registries: keyPrefix, applications: distributed-semaphore.key-prefix)");
        }
    }

    /** The store of the outermost class context: {@code @Nested} classes share their outer class's Redis. */
    private static Store classStore(ExtensionContext context) {
        ExtensionContext classContext = context;
        while (classContext.getParent().isPresent() && classContext.getParent().get().getTestClass().isPresent()) {
            classContext = classContext.getParent().get();
        }
        return classContext.getStore(NAMESPACE);
    }
}
