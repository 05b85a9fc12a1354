package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.ReportedUsage;
import io.github.redissemaphore.core.SemaphoreCap;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.SemaphoreState;
import io.github.redissemaphore.core.internal.redis.OverrideScript;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.core.internal.redis.StateScript;

import java.time.Instant;
import java.util.SortedMap;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;

/**
 * The cap of a capped semaphore, as {@link SemaphoreRegistry#cap(String)} hands it out: its calls
 * run on the cap's keys without a key, so the scripts read and change the cap itself (see
 * {@code _keys.lua}); its keys' semaphores come from the registry.
 */
final class DefaultSemaphoreCap implements SemaphoreCap {

    private static final Logger log = EngineLogs.SEMAPHORE;

    private final String name;
    private final SemaphoreSettings settings;
    private final SemaphoreRegistry registry;
    private final SemaphoreKeys keys;
    private final SemaphoreContext context;

    DefaultSemaphoreCap(String name, SemaphoreSettings settings, SemaphoreRegistry registry, SemaphoreKeys keys,
                        SemaphoreContext context) {
        this.name = name;
        this.settings = settings;
        this.registry = registry;
        this.keys = keys;
        this.context = context;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public SemaphoreSettings settings() {
        return settings;
    }

    @Override
    public RedisSemaphore semaphore(String key) {
        return registry.semaphore(name, key, settings);
    }

    @Override
    public SemaphoreState state() {
        StateScript.Read read = context.runner().call(keys, new StateScript(name, name, settings.permits(),
                DefaultRedisSemaphore.STATE_LIST_LIMIT));
        context.caps().seen(name, settings, read.usage());
        return read.asCap(settings.totalPermits());
    }

    @Override
    public SortedMap<Integer, Instant> otherConfiguredLimits() {
        return context.caps().otherConfiguredLimits(name);
    }

    @Override
    public @Nullable ReportedUsage reportedUsage() {
        return context.caps().reportedUsage(name);
    }

    @Override
    public void overrideLimit(int limit) {
        if (limit < 1 || limit > SemaphoreSettings.MAX_PERMITS) {
            throw new IllegalArgumentException("limit must be between 1 and " + SemaphoreSettings.MAX_PERMITS
                    + ", but was " + limit);
        }
        context.caps().seen(name, settings, context.runner().call(keys, new OverrideScript(settings.permits(), limit)));
        log.info("Semaphore '{}': runtime cap over all keys set to {} (configured here: {})", name, limit,
                settings.totalPermits());
    }

    @Override
    public void clearLimitOverride() {
        context.caps().seen(name, settings, context.runner().call(keys, new OverrideScript(settings.permits(), 0)));
        log.info("Semaphore '{}': runtime cap over all keys cleared; the configured {} applies here", name,
                settings.totalPermits());
    }
}
