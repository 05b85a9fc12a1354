package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.LocalState;
import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.SemaphoreState;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.internal.redis.OverrideScript;
import io.github.redissemaphore.core.internal.redis.ReplicaWait;
import io.github.redissemaphore.core.internal.redis.ScriptRunner;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.core.internal.redis.StateScript;
import io.github.redissemaphore.core.internal.redis.Usage;
import io.micrometer.observation.Observation;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One semaphore as this JVM sees it: the permits it holds and the callers it has waiting, kept
 * alive by one {@link RenewalTick}. Every decision is taken by the scripts in Redis.
 */
public final class DefaultRedisSemaphore implements RedisSemaphore {

    private static final Logger log = LoggerFactory.getLogger(DefaultRedisSemaphore.class);
    /** Most holders and waiters {@link #state()} lists. */
    private static final int STATE_LIST_LIMIT = 1000;

    final DefaultSemaphoreRegistry registry;
    final ScriptRunner commands;
    final ReplicaWait replicas;
    final SemaphoreSettings settings;
    final SemaphoreKeys keys;
    /** The name without its key ({@code "exports"} of {@code "exports:acme"}); the name when not keyed. */
    private final String baseName;
    /** The key of a keyed semaphore, else null: only keyed semaphores are forgotten when idle. */
    private final String key;
    final Map<String, DefaultPermit> held = new ConcurrentHashMap<>();
    final Map<String, PendingAcquisition> waiting = new ConcurrentHashMap<>();
    final RenewalTick tick;
    /** Where grants of this semaphore's waiters reach this JVM. */
    final String inboxChannel;
    private final NewestUsage newestUsage = new NewestUsage();
    private final LimitMismatch limitMismatch;
    /**
     * Guards retirement against acquisitions starting at the same moment; see {@link #retireIfIdle()}.
     * A lock, not a monitor: shutdown waits under it, and a virtual thread must never be pinned.
     */
    private final ReentrantLock lifecycle = new ReentrantLock();
    /** Signalled when no acquisition is starting any more. */
    private final Condition noneStarting = lifecycle.newCondition();
    private int starting;
    /** Written under {@link #lifecycle}; volatile so the reply path can skip reports of a forgotten semaphore. */
    private volatile boolean retired;
    /** Shutdown has begun: no acquisition starts any more. */
    private boolean closing;
    /** The waits of callers, from the first acquire call to a permit or an exception. */
    final Acquisitions acquisitions;
    /** Renewals, the confirmation of claims, and the watchdog that gives up leases about to end. */
    final LeaseKeeper leases;
    /** Permits that move: released (all, part, by id, by force), adopted, extended. */
    final PermitMoves moves;

    DefaultRedisSemaphore(DefaultSemaphoreRegistry registry, String name, String baseName, String key,
                          SemaphoreSettings settings) {
        this.registry = registry;
        this.commands = registry.commands();
        this.replicas = registry.replicas();
        this.settings = settings;
        this.baseName = baseName;
        this.key = key;
        this.keys = SemaphoreKeys.of(registry.keyPrefix(), name);
        this.tick = new RenewalTick(this, registry.scheduler());
        this.inboxChannel = registry.inbox().channel(keys);
        this.limitMismatch = registry.limitMismatches().of(name, baseName, settings);
        this.acquisitions = new Acquisitions(this);
        this.leases = new LeaseKeeper(this);
        this.moves = new PermitMoves(this);
    }

    @Override
    public String name() {
        return keys.name();
    }

    @Override
    public SemaphoreSettings settings() {
        return settings;
    }

    /** @return the name without its key; the name itself when the semaphore is not keyed */
    String baseName() {
        return baseName;
    }

    /** @return the key of a keyed semaphore, else null */
    String key() {
        return key;
    }

    @Override
    public Optional<Permit> tryAcquire() {
        try {
            return tryAcquire(1, Duration.ZERO);
        } catch (InterruptedException e) {
            // Duration.ZERO never waits, so nothing can interrupt it
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    @Override
    public Optional<Permit> tryAcquire(Duration maxWait) throws InterruptedException {
        return tryAcquire(1, maxWait);
    }

    @Override
    public Optional<Permit> tryAcquire(int permits, Duration maxWait) throws InterruptedException {
        return tryAcquire(permits, maxWait, settings.leaseTime());
    }

    @Override
    public Optional<Permit> tryAcquire(int permits, Duration maxWait, Duration leaseTime) throws InterruptedException {
        try {
            return Optional.of(acquisitions.await(start(permits, maxWait, leaseTime, false)));
        } catch (SemaphoreRejectedException e) {
            return Optional.empty();
        }
    }

    @Override
    public Permit acquire() throws InterruptedException {
        return acquisitions.await(start(1, settings.waitTime(), settings.leaseTime(), false));
    }

    @Override
    public CompletableFuture<Permit> acquireAsync(int permits, Duration maxWait) {
        return acquireAsync(permits, maxWait, settings.leaseTime());
    }

    @Override
    public CompletableFuture<Permit> acquireAsync(int permits, Duration maxWait, Duration leaseTime) {
        return start(permits, maxWait, leaseTime, true).future;
    }

    @Override
    public SemaphoreState state() {
        StateScript.Read reply = commands.call(keys, new StateScript(name(), settings.permits(), STATE_LIST_LIMIT));
        seen(reply.usage());
        return reply.state();
    }

    @Override
    public LocalState localState() {
        long now = System.nanoTime();
        long since = leases.failingSince(now);
        OptionalLong shortest = held.values().stream().mapToLong(DefaultPermit::leaseNanos).min();
        return new LocalState(name(), held.values().stream().mapToInt(DefaultPermit::count).sum(), waiting.size(),
                registry.inbox().isSubscribed(keys),
                since == LeaseKeeper.NONE ? null : Instant.now().minusNanos(now - since),
                shortest.isPresent() ? Duration.ofNanos(shortest.getAsLong()) : null, limitMismatch.others());
    }

    @Override
    public void overrideLimit(int limit) {
        if (limit < 1 || limit > SemaphoreSettings.MAX_PERMITS) {
            throw new IllegalArgumentException("limit must be between 1 and " + SemaphoreSettings.MAX_PERMITS
                    + ", but was " + limit);
        }
        seen(commands.call(keys, new OverrideScript(settings.permits(), limit)));
        log.info("Semaphore '{}': runtime limit set to {} (configured here: {})", name(), limit, settings.permits());
    }

    @Override
    public void clearLimitOverride() {
        seen(commands.call(keys, new OverrideScript(settings.permits(), 0)));
        log.info("Semaphore '{}': runtime limit cleared; the configured {} applies here", name(), settings.permits());
    }

    /**
     * Starts an acquisition. {@code async}: the acquire call is sent and its reply handled on the
     * callback pool (acquireAsync: the caller's thread is never blocked); else the caller's thread
     * waits for the reply and handles it.
     */
    private PendingAcquisition start(int permits, Duration maxWait, Duration leaseTime, boolean async) {
        settings.checkRequest(permits);
        SemaphoreSettings.checkWait("maxWait", maxWait);
        SemaphoreSettings.checkLease("leaseTime", leaseTime);
        DefaultRedisSemaphore live = enter();
        if (live != null) {
            return live.start(permits, maxWait, leaseTime, async);
        }
        Runnable started = once(this::started);
        try {
            return acquisitions.begin(permits, maxWait, leaseTime, async, started);
        } catch (RuntimeException | Error e) {
            started.run();
            throw e;
        }
    }

    /** @return {@code action}, run by the first call only: each start is counted down exactly once */
    private static Runnable once(Runnable action) {
        AtomicBoolean done = new AtomicBoolean();
        return () -> {
            if (done.compareAndSet(false, true)) {
                action.run();
            }
        };
    }

    /**
     * Lets an acquisition or adoption start, which may make this JVM hold or wait on the
     * semaphore; {@link #started()} must follow once it has (or has failed).
     *
     * @return null to go on here, or, when this semaphore was dropped from the registry while idle,
     *         the registry's live semaphore of the same name (which shutdown covers) to go on with
     */
    private DefaultRedisSemaphore enter() {
        lifecycle.lock();
        try {
            if (closing) {
                throw new SemaphoreUnavailableException("The semaphore registry is closed");
            }
            if (!retired) {
                starting++;
                return null;
            }
        } finally {
            lifecycle.unlock();
        }
        // Outside the lock: the live semaphore's acquisition talks to Redis.
        return registry.live(this);
    }

    /** An acquisition's first reply has been handled (or it never got to send one). */
    private void started() {
        lifecycle.lock();
        try {
            if (--starting == 0) {
                noneStarting.signalAll();
            }
        } finally {
            lifecycle.unlock();
        }
    }

    /**
     * Retires this semaphore if this JVM neither holds nor waits on it, nor is starting to: it
     * will never hold anything again (new acquisitions go to a live one), so the registry may
     * forget it.
     */
    boolean retireIfIdle() {
        lifecycle.lock();
        try {
            if (starting > 0 || !held.isEmpty() || !waiting.isEmpty()) {
                return false;
            }
            retired = true;
        } finally {
            lifecycle.unlock();
        }
        tick.stop();
        registry.inbox().forget(keys);
        return true;
    }

    @Override
    public boolean forceRelease(String permitId) {
        if (permitId == null) {
            throw new IllegalArgumentException("permitId must not be null");
        }
        return moves.forceRelease(permitId);
    }

    /** A hand-over, not a lost lease: see {@link PermitMoves#release(String)}. */
    @Override
    public boolean release(String permitId) {
        PermitMoves.checkPermitId(permitId);
        return onLive(live -> live.release(permitId), () -> moves.release(permitId));
    }

    @Override
    public Optional<Permit> adopt(String permitId) {
        PermitMoves.checkPermitId(permitId);
        return onLive(live -> live.adopt(permitId), () -> moves.adopt(permitId));
    }

    /**
     * Runs {@code here} on this semaphore, counted as starting so it is not retired meanwhile, or
     * {@code forward} on the live one when this one has been retired.
     */
    private <T> T onLive(Function<DefaultRedisSemaphore, T> forward, Supplier<T> here) {
        DefaultRedisSemaphore live = enter();
        if (live != null) {
            return forward.apply(live);
        }
        try {
            return here.get();
        } finally {
            started();
        }
    }

    /**
     * The permit, just put in {@link #held}, is held: its {@code semaphore.hold} observation
     * starts (beside the acquisition's, under the caller's {@code parent}) and the listeners hear
     * of it; unless it has ended meanwhile (a renewal found it gone), so nobody hears of its end
     * before its start.
     */
    void nowHeld(DefaultPermit permit, Observation parent) {
        permit.locked(() -> {
            if (held.get(permit.id()) == permit) {
                permit.observe(registry.observations().hold(this, permit.count(), parent));
                registry.listeners().permitHeld(permit);
            }
        });
    }

    /** The permit is no longer held here: its {@code semaphore.hold} observation ends, and the listeners hear. */
    void ended(DefaultPermit permit) {
        permit.locked(() -> {
            if (held.remove(permit.id()) != null) {
                permit.ended();
                registry.listeners().permitEnded(permit);
            }
        });
    }

    /**
     * Lets no acquisition start any more, and waits for those starting now (each within one
     * command timeout) to be in the queue or done, so shutdown ends every one of them: none can
     * slip into the queue behind it and wait for a deadline that a stopped scheduler never runs.
     */
    private void awaitStarts() {
        lifecycle.lock();
        try {
            closing = true;
            while (starting > 0) {
                noneStarting.await();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            lifecycle.unlock();
        }
    }

    /** A crash, for tests: ticks stop, nothing is sent to Redis. */
    void halt() {
        tick.stop();
    }

    /**
     * Shutdown: every wait ends with an exception and every held permit goes back.
     *
     * @return the clean-ups in Redis, which the registry waits for (bounded) before it stops
     */
    CompletableFuture<Void> shutdown() {
        awaitStarts();
        tick.stop();
        SemaphoreUnavailableException closed =
                new SemaphoreUnavailableException("The semaphore registry is shutting down");
        List<CompletableFuture<Void>> cleanUps = new ArrayList<>();
        waiting.values().forEach(pending -> cleanUps.add(acquisitions.abandon(pending, closed)));
        // All releases at once, not one command timeout after another while Redis is down.
        held.values().forEach(permit -> {
            if (permit.markReleased()) {
                ended(permit);
                cleanUps.add(moves.releaseInBackground(permit));
            }
        });
        return CompletableFuture.allOf(cleanUps.toArray(CompletableFuture[]::new));
    }

    /**
     * Takes in the usage figures of a reply: passes them on, and when this JVM has waiters, makes
     * sure it calls Redis again the moment the earliest lease ends, so a lease that ends without
     * a release is handed on at its deadline, not at the next tick.
     */
    void seen(Usage usage) {
        report(usage);
        limitMismatch.seen(usage);
        if (usage.earliestLeaseEndMillis() >= 0 && usage.waiters() > 0 && !waiting.isEmpty()) {
            tick.wakeWithin(Duration.ofMillis(usage.earliestLeaseEndMillis() + 1));
        }
    }

    private void report(Usage usage) {
        if (retired) {
            // a late reply of a clean-up: the registry has forgotten this semaphore (and its gauges)
            return;
        }
        newestUsage.offer(usage, figures -> registry.listeners().usageReported(name(), figures.limit(),
                figures.used(), figures.waiters()));
    }

    @Override
    public String toString() {
        return "RedisSemaphore[" + name() + ", " + settings + "]";
    }
}
