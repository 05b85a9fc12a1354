package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreCap;
import io.github.redissemaphore.core.SemaphoreListener;
import io.github.redissemaphore.core.SemaphoreLookup;
import io.github.redissemaphore.core.SemaphoreNames;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.internal.ReplyFigures.CapFigures;
import io.github.redissemaphore.core.internal.ReplyFigures.LimitMismatches;
import io.github.redissemaphore.core.internal.redis.Inbox;
import io.github.redissemaphore.core.internal.redis.InboxChoice;
import io.github.redissemaphore.core.internal.redis.Recovery;
import io.github.redissemaphore.core.internal.redis.RedisConnections;
import io.github.redissemaphore.core.internal.redis.Refusal;
import io.github.redissemaphore.core.internal.redis.ReplicaWait;
import io.github.redissemaphore.core.internal.redis.ScriptRunner;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.core.internal.redis.WaitCheck;
import io.github.redissemaphore.core.observation.SemaphoreHoldObservationConvention;
import io.github.redissemaphore.core.observation.SemaphoreObservationConvention;
import io.micrometer.observation.ObservationRegistry;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.scheduling.TaskScheduler;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;
import org.springframework.scheduling.concurrent.ThreadPoolTaskScheduler;

/**
 * The registry behind {@link SemaphoreRegistry#builder}: one inbox, one command runner and one
 * scheduler shared by all semaphores of this JVM. As a {@link SmartLifecycle} it stops after the
 * web server (in-flight calls finish and release their permits) and before the Redis connection
 * factory (so the last releases still reach Redis).
 */
public final class DefaultSemaphoreRegistry implements SemaphoreRegistry, SmartLifecycle {

    /** Stops after the web server's graceful shutdown and stop (DEFAULT_PHASE - 1024/-2048), before Redis (0). */
    public static final int PHASE = SmartLifecycle.DEFAULT_PHASE - 4096;
    /** How often idle keyed semaphores are forgotten. */
    static final Duration EVICTION_PERIOD = Duration.ofMinutes(1);
    private static final Logger log = LoggerFactory.getLogger(DefaultSemaphoreRegistry.class);

    /**
     * Longest time the start waits to learn whether Redis runs {@code WAIT}, when settings wait for
     * replicas: the first connection of a cold client may take longer than a call on a warm one. A
     * Redis that refuses connections answers at once; only one that does not answer at all delays
     * the start this long (and the first acquisition that waits for replicas checks again).
     */
    static final Duration START_UP_WAIT_CHECK = Duration.ofSeconds(10);
    /** Longest time close() waits for the clean-ups of abandoned waits to reach Redis. */
    private static final Duration SHUTDOWN_WAIT = Duration.ofSeconds(10);

    private final String keyPrefix;
    /** Whether Redis can be reached, for the semaphores with a degraded mode. */
    private final Outage outage;
    /** The shares of degraded modes taken from the fleet. */
    private final FleetShares fleet;
    private final SemaphoreSettings defaults;
    private final Map<String, SemaphoreSettings> configured;
    private final TaskScheduler scheduler;
    private final @Nullable ThreadPoolTaskScheduler ownScheduler;
    private final RedisConnections connections;
    private final ScriptRunner commands;
    private final ReplicaWait replicas;
    private final WaitCheck waitCheck;
    private final BackgroundCalls.Retries retries;
    private final Listeners listeners;
    private final Observations observations;
    private final Duration waiterHeartbeat;
    private final Duration waiterTick;
    private final Inbox inbox;
    /**
     * Where replies of asynchronous calls are handled (grants, rejections, renewals), and where
     * whatever may block on Redis runs (lending a connection that has to connect, closing one):
     * never on Lettuce's I/O threads, where a caller's continuation would stall Redis traffic, and
     * never on the scheduler, which only ever times things.
     */
    private final ExecutorService callbacks = Executors.newCachedThreadPool(new CustomizableThreadFactory(
            "semaphore-callback-") {
        {
            setDaemon(true);
        }
    });
    private final Map<String, DefaultRedisSemaphore> semaphores = new ConcurrentHashMap<>();
    private final Map<String, SemaphoreCap> caps = new ConcurrentHashMap<>();
    /** Mismatched configured limits warned about, per base name: outlives the semaphores it forgets. */
    private final LimitMismatches limitMismatches = new LimitMismatches();
    /** Waiter id -> its semaphore, to route grants arriving in the inbox. */
    private final Map<String, DefaultRedisSemaphore> waiters = new ConcurrentHashMap<>();
    /** What every semaphore of this registry shares, handed down when it is made. */
    private final SemaphoreContext context;
    /** Start, close and halt, one at a time. A lock, not a monitor: close waits under it (virtual threads). */
    private final ReentrantLock lifecycle = new ReentrantLock();
    private volatile boolean running;
    private volatile boolean closed;
    private @Nullable ScheduledFuture<?> eviction;

    public DefaultSemaphoreRegistry(RedisConnectionFactory connectionFactory, String keyPrefix,
                                    SemaphoreSettings defaults, Map<String, SemaphoreSettings> configured,
                                    @Nullable TaskScheduler scheduler,
                                    List<SemaphoreListener> listeners, Duration waiterHeartbeat,
                                    Duration waiterTick, Duration redisTimeout, ObservationRegistry observationRegistry,
                                    @Nullable SemaphoreObservationConvention acquireConvention,
                                    @Nullable SemaphoreHoldObservationConvention holdConvention) {
        this.keyPrefix = SemaphoreNames.check("keyPrefix", keyPrefix);
        this.defaults = defaults;
        this.configured = Map.copyOf(configured);
        if (scheduler == null) {
            ownScheduler = new ThreadPoolTaskScheduler();
            ownScheduler.setPoolSize(2);
            ownScheduler.setThreadNamePrefix("semaphore-tick-");
            ownScheduler.setDaemon(true);
            ownScheduler.setRemoveOnCancelPolicy(true);
            ownScheduler.initialize();
            this.scheduler = ownScheduler;
        } else {
            ownScheduler = null;
            this.scheduler = scheduler;
        }
        this.observations = new Observations(observationRegistry, acquireConvention, holdConvention);
        this.retries = new BackgroundCalls.Retries(this.scheduler);
        this.connections = new RedisConnections(connectionFactory, redisTimeout, callbacks,
                observations::inCallersScope, recovery());
        this.commands = new ScriptRunner(connections);
        this.replicas = new ReplicaWait(connections, observations.inCallersObservation(callbacks), callbacks);
        this.waitCheck = replicas.waitCheck();
        this.listeners = new Listeners(listeners);
        this.waiterHeartbeat = waiterHeartbeat;
        this.waiterTick = waiterTick;
        this.inbox = InboxChoice.of(connectionFactory, keyPrefix, Ids.clientId(), this.scheduler, callbacks,
                this::inboxGrant);
        this.outage = new Outage(commands, this.scheduler, callbacks, keyPrefix, () -> closed, new Outage.Recovering() {
            @Override
            public void settling() {
                semaphores.values().forEach(DefaultRedisSemaphore::settling);
            }

            @Override
            public void settleFailed() {
                semaphores.values().forEach(DefaultRedisSemaphore::settleFailed);
            }

            @Override
            public void redisAnswersAgain(Duration outage) {
                semaphores.values().forEach(semaphore -> semaphore.redisAnswersAgain(outage));
            }
        });
        this.fleet = new FleetShares(commands, this.scheduler, keyPrefix, outage::down);
        this.context = new SemaphoreContext(commands, replicas, this.scheduler, retries, callbacks, this.listeners,
                observations, inbox, limitMismatches, new CapFigures(this.listeners, limitMismatches), waiterHeartbeat,
                waiterTick, () -> closed, outage, fleet, new LocalCaps());
    }

    @Override
    public RedisSemaphore semaphore(String name) {
        return semaphore(name, settingsOf(name));
    }

    @Override
    public RedisSemaphore semaphore(String name, SemaphoreSettings settings) {
        NameParts parts = parse(name);
        return semaphore(name, parts.baseName(), parts.key(), settings);
    }

    @Override
    public RedisSemaphore semaphore(String baseName, String key, SemaphoreSettings settings) {
        SemaphoreNames.check("baseName", baseName);
        if (key == null) {
            throw new IllegalArgumentException("key must not be null");
        }
        return semaphore(SemaphoreNames.check("name", baseName + ":" + key), baseName, key, settings);
    }

    /** The first use of a name decides its base name and key: a semaphore is made once. */
    private DefaultRedisSemaphore semaphore(String name, String baseName, @Nullable String key,
                                            SemaphoreSettings settings) {
        if (settings == null) {
            throw new IllegalArgumentException("settings must not be null");
        }
        if (settings.capped() && key == null) {
            throw new IllegalArgumentException("semaphore '" + name + "' has totalPermits " + settings.totalPermits()
                    + " (a cap over all its keys), so it is used per key: semaphore(\"" + name
                    + "\", key, settings), or @DistributedSemaphore(value = \"" + name + "\", key = \"...\")");
        }
        DefaultRedisSemaphore semaphore = semaphores.computeIfAbsent(name, n -> create(n, baseName, key, settings));
        if (!semaphore.settings().equals(settings)) {
            throw new IllegalArgumentException("semaphore '" + name + "' is already used in this JVM with "
                    + semaphore.settings() + ", so it cannot also be used with " + settings);
        }
        return semaphore;
    }

    /**
     * A name as this registry reads it, the only place it is taken apart: one with a {@code ':'}
     * that is not configured by that exact name is keyed, base name before the first {@code ':'},
     * key after it; any other is its own base name.
     *
     * @throws IllegalArgumentException for an invalid name
     */
    private NameParts parse(String name) {
        SemaphoreNames.check("name", name);
        int colon = name.indexOf(':');
        return colon > 0 && !configured.containsKey(name)
                ? new NameParts(name.substring(0, colon), name.substring(colon + 1))
                : new NameParts(name, null);
    }

    /** @param key null for a name without a key */
    private record NameParts(String baseName, @Nullable String key) {
    }

    /** Makes a semaphore, whose waiters this registry routes the grants of the inbox to. */
    private DefaultRedisSemaphore create(String name, String baseName, @Nullable String key,
                                         SemaphoreSettings settings) {
        DefaultRedisSemaphore[] made = new DefaultRedisSemaphore[1];
        SemaphoreLedger.WaiterRoutes routes = new SemaphoreLedger.WaiterRoutes() {
            @Override
            public void route(String waiterId) {
                waiters.put(waiterId, made[0]);
            }

            @Override
            public void unroute(String waiterId) {
                waiters.remove(waiterId);
            }
        };
        made[0] = new DefaultRedisSemaphore(context, this::live, keyPrefix, name, baseName, key, settings, routes);
        return made[0];
    }

    @Override
    public SemaphoreCap cap(String baseName) {
        SemaphoreSettings settings = configured.get(SemaphoreNames.check("baseName", baseName));
        if (settings == null || !settings.capped()) {
            throw new IllegalArgumentException("semaphore '" + baseName + "' has no totalPermits configured, so it"
                    + " has no cap over its keys");
        }
        return caps.computeIfAbsent(baseName, name -> new DefaultSemaphoreCap(name, settings, this,
                SemaphoreKeys.capped(keyPrefix, name, null, settings.totalPermits()), context));
    }

    @Override
    public Collection<RedisSemaphore> semaphores() {
        return List.copyOf(semaphores.values());
    }

    @Override
    public SemaphoreSettings settingsOf(String name) {
        // configured by that exact name, else by its base name
        return configured.getOrDefault(parse(name).baseName(), defaults);
    }

    @Override
    public Optional<RedisSemaphore> inUse(String name) {
        return Optional.ofNullable(semaphores.get(name));
    }

    @Override
    public SemaphoreLookup lookup(String name) {
        NameParts parts;
        try {
            parts = parse(name);
        } catch (IllegalArgumentException e) {
            return new SemaphoreLookup.Unknown(name);
        }
        SemaphoreSettings own = configured.get(name);
        if (own != null && own.capped()) {
            return new SemaphoreLookup.Capped(cap(name));
        }
        DefaultRedisSemaphore used = semaphores.get(name);
        if (used != null) {
            return new SemaphoreLookup.Found(used);
        }
        if (own != null) {
            return new SemaphoreLookup.Found(semaphore(name, own));
        }
        String key = parts.key();
        SemaphoreSettings base = configured.get(parts.baseName());
        return key != null && base != null && base.capped()
                ? new SemaphoreLookup.Found(cap(parts.baseName()).semaphore(key))
                : new SemaphoreLookup.Unknown(name);
    }

    @Override
    public void start() {
        lifecycle.lock();
        try {
            if (!running && !closed) {
                connections.connectSoon();
                checkReplicas();
                inbox.start();
                eviction = scheduler.scheduleWithFixedDelay(this::evictIdleKeyed,
                        Instant.now().plus(EVICTION_PERIOD), EVICTION_PERIOD);
                running = true;
            }
        } finally {
            lifecycle.unlock();
        }
    }

    @Override
    public void stop() {
        close();
    }

    /**
     * When settings of this registry wait for replicas, learns whether the server runs
     * {@code WAIT}: if it refuses it, the registry closes and start-up fails with
     * {@link io.github.redissemaphore.core.ReplicasUnsupportedException}, naming those settings,
     * rather than each grant failing at run time. If Redis does not answer within
     * {@link #START_UP_WAIT_CHECK} (or the Redis timeout, if longer), the first grant that waits
     * for replicas checks instead. Under the lifecycle lock.
     */
    private void checkReplicas() {
        List<String> named = configured.entrySet().stream().filter(entry -> entry.getValue().waitsForReplicas())
                .map(Map.Entry::getKey).sorted().toList();
        boolean byDefault = defaults.waitsForReplicas();
        if (named.isEmpty() && !byDefault) {
            return;
        }
        Refusal refusal;
        try {
            Duration limit = connections.timeout().compareTo(START_UP_WAIT_CHECK) > 0 ? connections.timeout()
                    : START_UP_WAIT_CHECK;
            refusal = waitCheck.refusal(SemaphoreKeys.of(keyPrefix, named.isEmpty() ? "replicas" : named.get(0)),
                    limit).get();
        } catch (ExecutionException e) {
            log.info("Could not learn at start-up whether Redis runs WAIT ({}); the first grant that waits for"
                    + " replicas checks", e.getCause() == null ? e.getMessage() : e.getCause().getMessage());
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        if (refusal != null) {
            closeLocked();
            throw WaitCheck.unsupported(refusal, named, byDefault);
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    @Override
    public int getPhase() {
        return PHASE;
    }

    @Override
    public void close() {
        lifecycle.lock();
        try {
            closeLocked();
        } finally {
            lifecycle.unlock();
        }
    }

    private void closeLocked() {
        if (closed) {
            return;
        }
        closed = true;
        if (eviction != null) {
            eviction.cancel(false);
        }
        fleet.stop();
        List<CompletableFuture<Void>> backgroundCalls = semaphores.values().stream().map(DefaultRedisSemaphore::shutdown).toList();
        try {
            // Waits for the clean-ups of abandoned waits (bounded: each call has its own timeout).
            CompletableFuture.allOf(backgroundCalls.toArray(CompletableFuture[]::new)).get(SHUTDOWN_WAIT.toMillis(),
                    TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // what did not reach Redis ends with its heartbeat
        }
        inbox.stop();
        connections.close();
        callbacks.shutdown();
        if (ownScheduler != null) {
            ownScheduler.shutdown();
        }
        running = false;
    }

    /**
     * Stops this registry as a JVM that dies would: no tick, no inbox, no call to Redis ever again,
     * nothing released or cancelled; what it held or waited for in Redis ends with its lease or
     * heartbeat. For tests of crashes (reached from test code in this package); callers still
     * waiting on it are never answered.
     */
    void halt() {
        lifecycle.lock();
        try {
            haltLocked();
        } finally {
            lifecycle.unlock();
        }
    }

    private void haltLocked() {
        if (closed) {
            return;
        }
        closed = true;
        if (eviction != null) {
            eviction.cancel(false);
        }
        fleet.stop();
        semaphores.values().forEach(DefaultRedisSemaphore::halt);
        inbox.stop();
        connections.close();
        callbacks.shutdownNow();
        if (ownScheduler != null) {
            ownScheduler.getScheduledExecutor().shutdownNow();
        }
        running = false;
    }

    /**
     * Forgets keyed semaphores ({@code "exports:acme"}) that this JVM neither holds nor waits on,
     * so one semaphore per tenant does not pile up, and tells the listeners (their meters go too).
     * Run every {@link #EVICTION_PERIOD} (and by tests, from this package); a stale reference to a
     * forgotten one keeps working.
     */
    void evictIdleKeyed() {
        semaphores.forEach((name, semaphore) -> {
            if (semaphore.identity().key() != null && semaphore.retireIfIdle() && semaphores.remove(name, semaphore)) {
                listeners.semaphoreForgotten(name);
            }
        });
    }

    /** @return whether Redis can be reached, for the degraded modes; tests (in this package) hook its recovery */
    Outage outage() {
        return outage;
    }

    /** @return the limit mismatches warned about; tests (in this package) move their clock */
    LimitMismatches limitMismatches() {
        return limitMismatches;
    }

    /** @return the semaphore the registry holds now for the name of a retired one */
    private DefaultRedisSemaphore live(SemaphoreIdentity retired) {
        return semaphore(retired.name(), retired.baseName(), retired.key(), retired.settings());
    }

    /**
     * While clean-ups wait to be sent again, a lost connection is made anew at once; when Redis
     * answers again they go now, and if the library's connection was made anew, so is the inbox's
     * subscription, and every semaphore's next renewal, due at once, sweeps (see renew.lua).
     */
    private Recovery recovery() {
        return new Recovery() {
            @Override
            public boolean callsDue() {
                return retries.due();
            }

            @Override
            public void answersAgain(boolean reconnected) {
                retries.now();
                if (reconnected) {
                    inbox.reconnect();
                    // Maybe another server now (a failover): it may hold leases given back on the old one.
                    semaphores.values().forEach(DefaultRedisSemaphore::sweepSoon);
                }
            }
        };
    }

    /** A message of the inbox: a grant of a waiter of this JVM, or an adoption of one of its leases. */
    private void inboxGrant(String waiterId, long token) {
        if (token < 0) {
            // Not a grant: another JVM adopted a lease of this one at server time -token.
            semaphores.values().forEach(semaphore -> semaphore.adoptionHeard(waiterId, -token));
            return;
        }
        DefaultRedisSemaphore semaphore = waiters.get(waiterId);
        if (semaphore != null) {
            semaphore.grantHeard(waiterId, token);
        }
    }
}
