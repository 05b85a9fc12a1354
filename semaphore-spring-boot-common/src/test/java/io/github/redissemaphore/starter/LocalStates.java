package io.github.redissemaphore.starter;

import io.github.redissemaphore.core.LocalState;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.WhenUnavailable;

import java.lang.reflect.Proxy;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

import org.jspecify.annotations.Nullable;

/**
 * A semaphore registry whose semaphores show the local states a test sets, without Redis: for what
 * reads {@link RedisSemaphore#localState()} only (health, gauges), in states a real registry reaches
 * only through an outage, such as {@link LocalState#degraded() degraded mode}. Every other call of
 * its semaphores fails.
 */
public final class LocalStates implements SemaphoreRegistry {

    private final Map<String, LocalState> states = new ConcurrentHashMap<>();

    /** @return {@code state} as the state of its semaphore from now on, which is in use from now on */
    public LocalStates put(LocalState state) {
        states.put(state.name(), state);
        return this;
    }

    /**
     * @return the state of a semaphore that works through Redis, holding {@code permitsHeld}, its
     *         renewals failing since {@code renewalFailingSince} (null: they succeed)
     */
    public static LocalState throughRedis(String name, int permitsHeld, @Nullable Instant renewalFailingSince,
                                          @Nullable Duration shortestLease) {
        return new LocalState(name, permitsHeld, 0, true, renewalFailingSince, shortestLease, new TreeMap<>(), null);
    }

    /**
     * @return the state of a semaphore in degraded mode since {@code since}, holding
     *         {@code permitsHeld} permits Redis granted (whose renewals fail since then) and
     *         {@code localPermitsHeld} of its own
     */
    public static LocalState degraded(String name, WhenUnavailable mode, int share, int permitsHeld,
                                      int localPermitsHeld, Instant since, Duration shortestLease) {
        return new LocalState(name, permitsHeld, 0, false, permitsHeld > 0 ? since : null,
                permitsHeld > 0 ? shortestLease : null, new TreeMap<>(), null,
                new LocalState.Degraded(since, mode, share, localPermitsHeld));
    }

    @Override
    public RedisSemaphore semaphore(String name) {
        return semaphore(name, SemaphoreSettings.DEFAULTS);
    }

    @Override
    public RedisSemaphore semaphore(String name, SemaphoreSettings settings) {
        return (RedisSemaphore) Proxy.newProxyInstance(RedisSemaphore.class.getClassLoader(),
                new Class<?>[] {RedisSemaphore.class}, (proxy, method, arguments) -> switch (method.getName()) {
                    case "name" -> name;
                    case "settings" -> settings;
                    case "localState" -> states.get(name);
                    case "toString" -> "semaphore " + name + " of " + LocalStates.class.getSimpleName();
                    case "hashCode" -> name.hashCode();
                    case "equals" -> proxy == arguments[0];
                    default -> throw new UnsupportedOperationException(
                            method.getName() + ": only its local state is known");
                });
    }

    @Override
    public SemaphoreSettings settingsOf(String name) {
        return SemaphoreSettings.DEFAULTS;
    }

    @Override
    public Collection<RedisSemaphore> semaphores() {
        List<String> names = List.copyOf(new TreeMap<>(states).keySet());
        return names.stream().map(this::semaphore).toList();
    }

    @Override
    public void close() {
        states.clear();
    }
}
