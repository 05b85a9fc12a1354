package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.LocalState;
import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.SemaphoreState;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.SemaphoreUnavailableException.Reason;
import io.github.redissemaphore.core.WhenUnavailable;
import io.github.redissemaphore.core.internal.redis.GrantRunner;
import io.github.redissemaphore.core.internal.redis.OverrideScript;
import io.github.redissemaphore.core.internal.redis.RateOverrideScript;
import io.github.redissemaphore.core.internal.redis.SemaphoreKeys;
import io.github.redissemaphore.core.internal.redis.StateScript;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One semaphore as this JVM sees it: the public face of its pieces, which checks arguments and
 * hands each call to the one piece whose job it is. Every decision is taken by the scripts in
 * Redis; the state this JVM keeps of the semaphore is its {@link SemaphoreLedger}'s. The pieces
 * and their arrows are drawn in this package's documentation.
 */
public final class DefaultRedisSemaphore implements RedisSemaphore {

    private static final Logger log = LoggerFactory.getLogger(DefaultRedisSemaphore.class);
    /** Most holders and waiters {@link #state()} lists. */
    static final int STATE_LIST_LIMIT = 1000;

    /** Where a retired semaphore sends new work: the registry's live semaphore of the same name. */
    interface LiveSemaphores {

        DefaultRedisSemaphore live(SemaphoreIdentity retired);
    }

    private final SemaphoreIdentity identity;
    private final SemaphoreContext context;
    private final LiveSemaphores liveSemaphores;
    private final SemaphoreLedger ledger;
    private final RenewalTick tick;
    private final ReplyFigures figures;
    private final BackgroundCalls backgroundCalls;
    /** The waits of callers, from the first acquire call to a permit or an exception. */
    private final Acquisitions acquisitions;
    /** Renewals and the confirmation of claims. */
    private final LeaseKeeper keeper;
    /** Permits that move: released (all, part, by id, by force), adopted, extended. */
    private final HeldPermits heldPermits;
    /** The calls decided without Redis while it cannot be reached (when-unavailable). */
    private final DegradedMode degraded;

    DefaultRedisSemaphore(SemaphoreContext context, LiveSemaphores liveSemaphores, String keyPrefix, String name,
                          String baseName, @Nullable String key, SemaphoreSettings settings,
                          SemaphoreLedger.WaiterRoutes routes) {
        // A key of a capped semaphore lives in its cap's keys; the registry makes no capped one without a key.
        SemaphoreKeys keys = settings.capped() && key != null
                ? SemaphoreKeys.capped(keyPrefix, baseName, key, settings.totalPermits())
                : SemaphoreKeys.of(keyPrefix, name).withRate(settings.rateLimit(), settings.ratePeriod());
        this.identity = new SemaphoreIdentity(baseName, key, keys, settings, context.inbox().channel(keys));
        this.context = context;
        this.liveSemaphores = liveSemaphores;
        this.ledger = new SemaphoreLedger(identity, context.listeners(), context.observations(), routes);
        this.tick = new RenewalTick(identity, ledger, context.scheduler(), context.waiterTick(),
                context.waiterHeartbeat());
        this.figures = new ReplyFigures(name, ledger, tick, context.mismatches().of(name, baseName, settings),
                context.listeners(), usage -> context.caps().seen(baseName, settings, usage));
        this.backgroundCalls = new BackgroundCalls(identity, context, figures);
        LeaseKeeper.Watchdog watchdog = new LeaseKeeper.Watchdog(ledger, backgroundCalls, context.scheduler());
        this.heldPermits = new HeldPermits(identity, context, ledger, figures, watchdog, backgroundCalls, tick);
        GrantRunner grants = new GrantRunner(name, context.runner(), context.replicas(), settings.replicas(),
                settings.replicationTimeout(), context.callbacks(),
                held -> backgroundCalls.cancel(held.id(), held.lease()));
        this.acquisitions = new Acquisitions(identity, context, ledger, figures, backgroundCalls, tick, heldPermits,
                grants);
        this.keeper = new LeaseKeeper(identity, context, ledger, figures, watchdog, acquisitions);
        tick.drive(keeper);
        this.degraded = new DegradedMode(identity, context, ledger::permitsHeld);
        degraded.drive(new DegradedMode.RedisPath() {
            @Override
            public CompletableFuture<Permit> writeBack(int count, Duration lease) {
                return start(count, Duration.ZERO, lease, false, true).future;
            }

            @Override
            public CompletableFuture<Permit> acquire(int count, Duration maxWait, Duration lease) {
                return acquireAsync(count, maxWait, lease);
            }
        });
    }

    @Override
    public String name() {
        return identity.name();
    }

    @Override
    public SemaphoreSettings settings() {
        return identity.settings();
    }

    SemaphoreIdentity identity() {
        return identity;
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
        return tryAcquire(permits, maxWait, identity.settings().leaseTime());
    }

    @Override
    public Optional<Permit> tryAcquire(int permits, Duration maxWait, Duration leaseTime) throws InterruptedException {
        try {
            return Optional.of(decided(permits, maxWait, leaseTime));
        } catch (SemaphoreRejectedException e) {
            return Optional.empty();
        }
    }

    @Override
    public Permit acquire() throws InterruptedException {
        return decided(1, identity.settings().waitTime(), identity.settings().leaseTime());
    }

    @Override
    public Permit acquire(int permits, Duration maxWait) throws InterruptedException {
        return decided(permits, maxWait, identity.settings().leaseTime());
    }

    @Override
    public CompletableFuture<Permit> acquireAsync(int permits, Duration maxWait) {
        return acquireAsync(permits, maxWait, identity.settings().leaseTime());
    }

    @Override
    public CompletableFuture<Permit> acquireAsync(int permits, Duration maxWait, Duration leaseTime) {
        long startNanos = System.nanoTime();
        if (identity.settings().whenUnavailable() == WhenUnavailable.REJECT) {
            return start(permits, maxWait, leaseTime, false, false).future;
        }
        if (degraded.decidesNow()) {
            checkArguments(permits, maxWait, leaseTime);
            return degraded.acquire(permits, maxWait, leaseTime, startNanos);
        }
        CompletableFuture<Permit> throughRedis = start(permits, maxWait, leaseTime, false, false).future;
        CompletableFuture<Permit> decision = new CompletableFuture<>();
        throughRedis.whenComplete((permit, error) -> {
            if (error == null) {
                if (!decision.complete(permit)) {
                    permit.release();
                }
            } else if (degraded.takesOver(error)) {
                // Redis cannot be reached: decided here, with the wait the caller has left.
                Duration left = Duration.ofNanos(Math.max(0, startNanos + maxWait.toNanos() - System.nanoTime()));
                CompletableFuture<Permit> local = degraded.acquire(permits, left, leaseTime, System.nanoTime());
                decision.whenComplete((p, e) -> {
                    if (decision.isCancelled()) {
                        local.cancel(false);
                    }
                });
                local.whenComplete((p, e) -> {
                    if (e != null) {
                        decision.completeExceptionally(e);
                    } else if (!decision.complete(p)) {
                        p.release();
                    }
                });
            } else {
                decision.completeExceptionally(error);
            }
        });
        // A caller that cancels its future cancels the wait it is in.
        decision.whenComplete((permit, error) -> {
            if (decision.isCancelled()) {
                throughRedis.cancel(false);
            }
        });
        return decision;
    }

    /**
     * Awaits a decision on the caller's thread: through Redis, or, when the semaphore has a
     * degraded mode and Redis cannot be reached, here (at once while it is known unreachable;
     * after the call that found it so, with the wait the caller has left).
     */
    private Permit decided(int permits, Duration maxWait, Duration leaseTime) throws InterruptedException {
        long startNanos = System.nanoTime();
        if (degraded.decidesNow()) {
            checkArguments(permits, maxWait, leaseTime);
            return DegradedMode.await(degraded.acquire(permits, maxWait, leaseTime, startNanos));
        }
        try {
            return acquisitions.await(start(permits, maxWait, leaseTime, true, false));
        } catch (SemaphoreUnavailableException e) {
            if (!degraded.takesOver(e)) {
                throw e;
            }
            Duration left = Duration.ofNanos(Math.max(0, startNanos + maxWait.toNanos() - System.nanoTime()));
            return DegradedMode.await(degraded.acquire(permits, left, leaseTime, System.nanoTime()));
        }
    }

    private void checkArguments(int permits, Duration maxWait, Duration leaseTime) {
        identity.settings().checkRequest(permits);
        SemaphoreSettings.checkWait("maxWait", maxWait);
        SemaphoreSettings.checkLease("leaseTime", leaseTime);
        context.checkOpen();
    }

    @Override
    public SemaphoreState state() {
        StateScript.Read reply = context.runner().call(identity.keys(), new StateScript(name(), identity.baseName(),
                identity.limit(), STATE_LIST_LIMIT));
        figures.takeIn(reply.usage());
        return reply.state();
    }

    @Override
    public LocalState localState() {
        long now = System.nanoTime();
        long since = keeper.failingSince(now, tick.delay());
        OptionalLong shortest = ledger.shortestLease();
        return new LocalState(name(), ledger.permitsHeld(), ledger.waiterCount(),
                context.inbox().isSubscribed(identity.keys()),
                since == LeaseKeeper.NONE ? null : Instant.now().minusNanos(now - since),
                shortest.isPresent() ? Duration.ofNanos(shortest.getAsLong()) : null,
                figures.otherConfiguredLimits(), figures.reportedUsage(), degraded.snapshot());
    }

    @Override
    public void overrideLimit(int limit) {
        if (limit < 1 || limit > SemaphoreSettings.MAX_PERMITS) {
            throw new IllegalArgumentException("limit must be between 1 and " + SemaphoreSettings.MAX_PERMITS
                    + ", but was " + limit);
        }
        figures.takeIn(context.runner().call(identity.keys(), new OverrideScript(identity.limit(), limit)));
        log.info("Semaphore '{}': runtime limit set to {} (configured here: {})", name(), limit, identity.limit());
    }

    @Override
    public void clearLimitOverride() {
        figures.takeIn(context.runner().call(identity.keys(), new OverrideScript(identity.limit(), 0)));
        log.info("Semaphore '{}': runtime limit cleared; the configured {} applies here", name(), identity.limit());
    }

    @Override
    public void overrideRateLimit(int rateLimit, Duration ratePeriod) {
        if (rateLimit < 1 || rateLimit > SemaphoreSettings.MAX_RATE_LIMIT) {
            throw new IllegalArgumentException("rateLimit must be between 1 and " + SemaphoreSettings.MAX_RATE_LIMIT
                    + ", but was " + rateLimit);
        }
        // The ranges as the settings check them, with their messages (each names its argument).
        SemaphoreSettings.DEFAULTS.withRateLimit(rateLimit, ratePeriod);
        requireRate();
        figures.takeIn(context.runner().call(identity.keys(),
                new RateOverrideScript(identity.limit(), rateLimit, ratePeriod)));
        log.info("Semaphore '{}': runtime rate set to {} per {} ms (configured here: {} per {} ms)", name(), rateLimit,
                ratePeriod.toMillis(), identity.settings().rateLimit(), identity.settings().ratePeriod().toMillis());
    }

    @Override
    public void clearRateLimitOverride() {
        requireRate();
        figures.takeIn(context.runner().call(identity.keys(), new RateOverrideScript(identity.limit(), 0, Duration.ZERO)));
        log.info("Semaphore '{}': runtime rate cleared; the configured {} per {} ms applies here", name(),
                identity.settings().rateLimit(), identity.settings().ratePeriod().toMillis());
    }

    /** A runtime rate applies to the window a rate's calls carry: a semaphore without one has none. */
    private void requireRate() {
        if (identity.settings().rateLimit() == 0) {
            throw new IllegalStateException("Semaphore '" + name() + "' has no rateLimit configured here, so it has no"
                    + " rate to override: configure a rateLimit and ratePeriod for it first");
        }
    }

    /**
     * Starts an acquisition, which never blocks the caller's thread: a synchronous acquire awaits
     * it ({@code awaited}: {@link Acquisitions#await}, which handles its first reply on the
     * caller's thread meanwhile), an asynchronous one returns its future.
     */
    private PendingAcquisition start(int permits, Duration maxWait, Duration leaseTime, boolean awaited,
                                     boolean overLimit) {
        identity.settings().checkRequest(permits);
        SemaphoreSettings.checkWait("maxWait", maxWait);
        SemaphoreSettings.checkLease("leaseTime", leaseTime);
        long since = figures.newestMicros();
        if (!ledger.enter(since)) {
            // Outside the ledger's lock: the live semaphore's acquisition talks to Redis.
            return liveSemaphores.live(identity).start(permits, maxWait, leaseTime, awaited, overLimit);
        }
        Runnable started = once(() -> ledger.started(since));
        PendingAcquisition pending;
        try {
            pending = acquisitions.begin(permits, maxWait, leaseTime, awaited, overLimit, started);
        } catch (RuntimeException | Error e) {
            started.run();
            UnavailableWarnings.JVM.heard(identity.baseName(), e);
            throw e;
        }
        // Whatever the caller hears of an unavailable Redis is said at WARN too (once a minute per cause).
        pending.future.whenComplete((permit, failure) -> UnavailableWarnings.JVM.heard(identity.baseName(), failure));
        return pending;
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
     * Retires this semaphore if this JVM neither holds nor waits on it, nor is starting to (see
     * {@link SemaphoreLedger}): then its tick stops and its inbox channel, if it has one, goes.
     *
     * @return whether it retired: the registry may forget it
     */
    boolean retireIfIdle() {
        if (degraded.busy() || !ledger.retireIfIdle()) {
            return false;
        }
        degraded.retired();
        tick.stop();
        context.inbox().forget(identity.keys());
        return true;
    }

    @Override
    public boolean forceRelease(String permitId) {
        if (permitId == null) {
            throw new IllegalArgumentException("permitId must not be null");
        }
        return heldPermits.forceRelease(permitId);
    }

    /** A hand-over, not a lost lease: see {@link HeldPermits#release(String)}. */
    @Override
    public boolean release(String permitId) {
        HeldPermits.checkPermitId(permitId);
        return onLive(live -> live.release(permitId), () -> heldPermits.release(permitId));
    }

    @Override
    public Optional<Permit> adopt(String permitId) {
        HeldPermits.checkPermitId(permitId);
        return onLive(live -> live.adopt(permitId), () -> heldPermits.adopt(permitId));
    }

    /**
     * Runs {@code here} on this semaphore, counted as starting so it is not retired meanwhile, or
     * {@code forward} on the live one when this one has been retired.
     */
    private <T> T onLive(Function<DefaultRedisSemaphore, T> forward, Supplier<T> here) {
        // 0: an adoption makes this JVM own a lease of an old token; no sweep while one is starting.
        if (!ledger.enter(0)) {
            return forward.apply(liveSemaphores.live(identity));
        }
        try {
            return here.get();
        } finally {
            ledger.started(0);
        }
    }

    /** The inbox heard a grant of waiter {@code id} ({@code token > 0}), or that it can never be (0). */
    void grantHeard(String waiterId, long token) {
        acquisitions.granted(waiterId, token, System.nanoTime(), 0);
    }

    /** The inbox heard that another JVM adopted lease {@code permitId} at server time {@code adoptedMicros}. */
    void adoptionHeard(String permitId, long adoptedMicros) {
        keeper.adoptedElsewhere(permitId, adoptedMicros);
    }

    /** Redis answered a probe after an outage: a degraded semaphore writes back and grants nothing (see {@link Outage}). */
    void settling() {
        degraded.settle();
    }

    /** Redis failed again while the semaphores settled: a degraded semaphore decides on its own again. */
    void settleFailed() {
        degraded.unsettle();
    }

    /** Redis answers again after an outage of {@code outage}: a degraded semaphore goes through Redis. */
    void redisAnswersAgain(Duration outage) {
        degraded.recover(outage);
    }

    /** One renewal tick now, for tests that time it. */
    void renewNow() {
        keeper.renewNow();
    }

    /**
     * The library's connection was made anew: the next renewal, due at once, ends the leases of
     * this JVM that Redis may still hold although this JVM gave them back (see renew.lua).
     */
    void sweepSoon() {
        keeper.sweepSoon(tick);
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
        ledger.close();
        tick.stop();
        degraded.shutdown();
        SemaphoreUnavailableException closed =
                new SemaphoreUnavailableException(name(), Reason.SHUTTING_DOWN,
                        "The semaphore registry is shutting down", null);
        List<CompletableFuture<Void>> cleanUpsDone = new ArrayList<>();
        ledger.waiters().forEach(pending -> cleanUpsDone.add(acquisitions.abandon(pending, closed)));
        // All releases at once, not one command timeout after another while Redis is down.
        ledger.leases().forEach(lease -> {
            if (lease.release()) {
                ledger.ended(lease);
                cleanUpsDone.add(backgroundCalls.release(lease));
            }
        });
        return CompletableFuture.allOf(cleanUpsDone.toArray(CompletableFuture[]::new));
    }

    @Override
    public String toString() {
        return "RedisSemaphore[" + name() + ", " + identity.settings() + "]";
    }
}
