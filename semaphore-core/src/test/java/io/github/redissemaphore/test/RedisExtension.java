package io.github.redissemaphore.test;

import java.util.HashMap;
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
 * <p>Before each test method the class's server and cluster, if already created, get back in shape
 * (a stopped managed server is restarted, a pause lifted) and are flushed ({@code FLUSHALL}); a new
 * one is flushed when created. After each test, the connection factories the test created on them
 * (in {@code @BeforeEach} methods or the test itself) are destroyed, so a class of many tests does
 * not pile up Lettuce clients; those created in constructors, {@code @BeforeAll} or earlier tests'
 * instances live until the class ends. Test methods of one class must not run concurrently: they
 * share a server that is flushed before each of them.
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
            return classStore.computeIfAbsent(RedisServer.class, key -> openFlushed(), RedisServer.class);
        }
        return classStore.computeIfAbsent(RedisCluster.class, key -> RedisCluster.start(), RedisCluster.class);
    }

    /** A server from REDIS_URL may hold data of an earlier run: start the class from empty. */
    private static RedisServer openFlushed() {
        RedisServer server = RedisServers.open();
        try {
            server.flushAll();
            return server;
        } catch (RuntimeException e) {
            server.close();
            throw e;
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        Store classStore = classStore(context);
        Map<Class<?>, Integer> marks = new HashMap<>();
        RedisServer server = classStore.get(RedisServer.class, RedisServer.class);
        if (server != null) {
            server.heal();
            server.flushAll();
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
