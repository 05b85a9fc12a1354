package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.LocalState;
import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.SemaphoreListener.Outcome;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.SemaphoreUnavailableException.Reason;
import io.github.redissemaphore.core.WhenUnavailable;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.IntSupplier;

import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;

/**
 * One semaphore's degraded mode ({@link SemaphoreSettings#whenUnavailable()}): from the moment a
 * call found Redis unreachable ({@link Outage}) until Redis answers again, its calls are decided
 * here, without Redis. {@code local}: out of this instance's share, counting the permits Redis
 * granted it that are still held, with waits, deadlines and its callers' arrival order;
 * {@code allow}: at once, unguarded. When Redis answers a probe ({@link #settle}), the permits it
 * granted and that are still held are written back to Redis as holders (over the limit if need
 * be: no new grant until they drained), and it grants nothing more; once the outage is over
 * ({@link #recover}) its waiters join Redis' queue in their order and calls go through Redis.
 *
 * <p>Invariants, under {@code lock} (the cap's lock for every key of a capped semaphore, so the
 * cap's share is taken atomically across its keys): {@code localHeld} is the permits of
 * {@code held} not yet given back or written back; a grant happens only when Redis-held plus
 * {@code localHeld} plus the request fit the share (and the cap's share); waiters are served in
 * order, none overtaking the head unless {@code fair} is false; every wait ends once (granted,
 * refused at its deadline, moved to Redis, or failed at shutdown).
 */
final class DegradedMode implements LocalPermit.Share {

    private static final Logger log = EngineLogs.SEMAPHORE;
    /** How often waiters look again while they wait: permits Redis granted end without a local call. */
    static final Duration RECHECK = Duration.ofMillis(50);

    /** The calls that go through Redis again on recovery: the semaphore's own. */
    interface RedisPath {

        /** Writes a permit granted here back to Redis as a holder, whatever the limit. */
        CompletableFuture<Permit> writeBack(int count, Duration lease);

        /** A caller that waited here asks Redis, with the wait it has left (and falls back here if it fails). */
        CompletableFuture<Permit> acquire(int count, Duration maxWait, Duration lease);
    }

    /** A caller waiting here. */
    private static final class Wait {

        final int count;
        final Duration maxWait;
        final Duration lease;
        final long startNanos;
        final CompletableFuture<Permit> future = new CompletableFuture<>();
        @Nullable ScheduledFuture<?> deadline;

        Wait(int count, Duration maxWait, Duration lease, long startNanos) {
            this.count = count;
            this.maxWait = maxWait;
            this.lease = lease;
            this.startNanos = startNanos;
        }

        long leftNanos() {
            return startNanos + maxWait.toNanos() - System.nanoTime();
        }
    }

    private final SemaphoreIdentity identity;
    private final SemaphoreSettings settings;
    private final SemaphoreContext context;
    /** The permits Redis granted this JVM that it still holds: they count against the share. */
    private final IntSupplier redisHeld;
    private final LocalCaps.@Nullable Family cap;
    private final ReentrantLock lock;
    private @Nullable RedisPath redis;

    private volatile @Nullable Instant since;
    /** Redis answered a probe: the permits granted here are written back, and none is granted (see {@link Outage}). */
    private boolean settling;
    private final Set<LocalPermit> held = new LinkedHashSet<>();
    private int localHeld;
    private final ArrayDeque<Wait> waits = new ArrayDeque<>();
    private @Nullable ScheduledFuture<?> recheck;
    private int admitted;
    private int refused;
    /** Permits written back in this recovery, for its log line. */
    private int writtenBack;

    DegradedMode(SemaphoreIdentity identity, SemaphoreContext context, IntSupplier redisHeld) {
        this.identity = identity;
        this.settings = identity.settings();
        this.context = context;
        this.redisHeld = redisHeld;
        this.cap = settings.capped() && settings.whenUnavailable() == WhenUnavailable.LOCAL
                ? context.localCaps().family(identity.baseName(), this) : null;
        this.lock = cap != null ? cap.lock : new ReentrantLock();
        if (settings.whenUnavailable() == WhenUnavailable.LOCAL && settings.localPermits() == 0) {
            context.fleet().use(identity.baseName());
        }
    }

    /** Tied once, by the semaphore that owns it. */
    void drive(RedisPath path) {
        this.redis = path;
    }

    private String name() {
        return identity.name();
    }

    private WhenUnavailable mode() {
        return settings.whenUnavailable();
    }

    /** @return whether calls are decided here now, without a call to Redis */
    boolean decidesNow() {
        return mode() != WhenUnavailable.REJECT && (since != null || context.outage().down());
    }

    /** @return whether a call that failed with {@code failure} is decided here instead (Redis is unreachable) */
    boolean takesOver(Throwable failure) {
        return mode() != WhenUnavailable.REJECT && context.outage().found(failure);
    }

    /** @return whether it holds or waits for anything: a semaphore that does is not retired */
    boolean busy() {
        lock.lock();
        try {
            return localHeld > 0 || !waits.isEmpty();
        } finally {
            lock.unlock();
        }
    }

    /** @return what it does while degraded, or null while the semaphore works through Redis */
    LocalState.@Nullable Degraded snapshot() {
        Instant degradedSince = since;
        if (degradedSince == null) {
            return null;
        }
        lock.lock();
        try {
            return new LocalState.Degraded(degradedSince, mode(), mode() == WhenUnavailable.LOCAL ? share() : 0,
                    localHeld);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Decides a call without Redis: {@code allow} at once; {@code local} now if it fits the share,
     * else it waits in order until it does or its wait (counted from {@code startNanos}) ends.
     */
    CompletableFuture<Permit> acquire(int count, Duration maxWait, Duration lease, long startNanos) {
        enter();
        if (mode() == WhenUnavailable.ALLOW) {
            lock.lock();
            try {
                admitted++;
            } finally {
                lock.unlock();
            }
            admittedWithoutRedis(count, startNanos);
            return CompletableFuture.completedFuture(new LocalPermit(name(), count, lease, null));
        }
        Wait wait = new Wait(count, maxWait, lease, startNanos);
        List<Runnable> outcomes = new ArrayList<>(1);
        lock.lock();
        try {
            if ((waits.isEmpty() || !settings.fair()) && fits(count)) {
                outcomes.add(grant(wait));
            } else if (wait.leftNanos() <= 0) {
                outcomes.add(refuse(wait));
            } else {
                waits.add(wait);
                wait.deadline = context.scheduler().schedule(() -> deadlinePassed(wait),
                        Instant.now().plusNanos(wait.leftNanos()));
                wait.future.whenComplete((permit, error) -> {
                    if (wait.future.isCancelled()) {
                        cancelled(wait);
                    }
                });
                recheckLater();
            }
        } finally {
            lock.unlock();
        }
        outcomes.forEach(Runnable::run);
        return wait.future;
    }

    /** Awaits a local decision on the caller's thread. */
    static Permit await(CompletableFuture<Permit> decision) throws InterruptedException {
        try {
            return decision.get();
        } catch (InterruptedException e) {
            decision.cancel(false);
            throw e;
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof RuntimeException cause) {
                throw cause;
            }
            throw new IllegalStateException(e.getCause());
        }
    }

    @Override
    public void givenBack(LocalPermit permit, int permits) {
        lock.lock();
        try {
            localHeld -= permits;
            if (!permit.isHeld()) {
                held.remove(permit);
            }
        } finally {
            lock.unlock();
        }
        serve();
    }

    /**
     * Redis answered a probe: the permits granted here and still held are written back, and none
     * is granted any more until the outage is over ({@link #recover}) or Redis fails again
     * ({@link #unsettle}). Sent under the lock, so a permit given back meanwhile is kept by its
     * write-back's reply.
     */
    void settle() {
        lock.lock();
        try {
            if (since == null || mode() != WhenUnavailable.LOCAL) {
                return;
            }
            settling = true;
            writeBackLocked();
        } finally {
            lock.unlock();
        }
    }

    /** Redis failed again while the semaphore settled: it grants out of its share again. */
    void unsettle() {
        lock.lock();
        try {
            settling = false;
        } finally {
            lock.unlock();
        }
        serve();
    }

    /**
     * The outage is over: the callers waiting here ask Redis, in their order, sent under the lock
     * so that a caller that comes after goes to Redis behind them; a permit whose write-back did
     * not happen yet is written back now.
     */
    void recover(Duration outage) {
        List<Runnable> outcomes = new ArrayList<>();
        int moved = 0;
        int admittedHere;
        int refusedHere;
        int stillLocal;
        int written;
        lock.lock();
        try {
            if (since == null) {
                return;
            }
            since = null;
            settling = false;
            admittedHere = admitted;
            refusedHere = refused;
            admitted = 0;
            refused = 0;
            writeBackLocked();
            written = writtenBack;
            writtenBack = 0;
            stillLocal = localHeld;
            RedisPath path = java.util.Objects.requireNonNull(redis, "redis path");
            for (Wait wait : List.copyOf(waits)) {
                waits.remove(wait);
                cancelTimer(wait.deadline);
                long left = wait.leftNanos();
                if (left <= 0) {
                    outcomes.add(refuse(wait));
                    continue;
                }
                moved++;
                path.acquire(wait.count, Duration.ofNanos(left), wait.lease).whenComplete((permit, error) -> {
                    if (error != null) {
                        wait.future.completeExceptionally(error);
                    } else if (!wait.future.complete(permit)) {
                        permit.release();
                    }
                });
            }
            cancelTimer(recheck);
            recheck = null;
        } finally {
            lock.unlock();
        }
        outcomes.forEach(Runnable::run);
        if (mode() == WhenUnavailable.LOCAL) {
            log.info("Semaphore '{}': Redis answers again after {} ms and the semaphore works through it again;"
                    + " during the outage {} call(s) were admitted on this instance and {} refused; {} permit(s) granted"
                    + " here were still held and written back to Redis as holders ({} not confirmed yet), {} waiter(s)"
                    + " moved to its queue", name(), outage.toMillis(), admittedHere, refusedHere, written,
                    stillLocal, moved);
        } else {
            log.info("Semaphore '{}': Redis answers again after {} ms; during the outage {} call(s) ran unguarded"
                    + " (when-unavailable: allow)", name(), outage.toMillis(), admittedHere);
        }
        context.listeners().degradedModeChanged(name(), false);
    }

    /** Under the lock: sends the write-back of every permit granted here that is still held and local. */
    private void writeBackLocked() {
        RedisPath path = java.util.Objects.requireNonNull(redis, "redis path");
        for (LocalPermit permit : List.copyOf(held)) {
            if (permit.writing()) {
                writtenBack += permit.count();
                path.writeBack(permit.count(), permit.lease())
                        .whenComplete((redisPermit, error) -> written(permit, redisPermit, error));
            }
        }
    }

    /** The semaphore retired: a capped key leaves its family. */
    void retired() {
        if (cap != null) {
            cap.leave(this);
        }
    }

    /** Shutdown: the callers waiting here hear it. */
    void shutdown() {
        List<Wait> ended;
        lock.lock();
        try {
            ended = List.copyOf(waits);
            waits.clear();
            cancelTimer(recheck);
        } finally {
            lock.unlock();
        }
        SemaphoreUnavailableException closed = new SemaphoreUnavailableException(name(), Reason.SHUTTING_DOWN,
                "The semaphore registry is shutting down", null);
        ended.forEach(wait -> {
            cancelTimer(wait.deadline);
            wait.future.completeExceptionally(closed);
        });
    }

    /** @return Redis-held and local permits of this semaphore in this JVM, under the lock */
    int inside() {
        return redisHeld.getAsInt() + localHeld;
    }

    private void enter() {
        if (since != null) {
            return;
        }
        lock.lock();
        try {
            if (since != null) {
                return;
            }
            since = Instant.now();
        } finally {
            lock.unlock();
        }
        if (mode() == WhenUnavailable.LOCAL) {
            int share;
            lock.lock();
            try {
                share = share();
            } finally {
                lock.unlock();
            }
            log.warn("Semaphore '{}': Redis cannot be reached; until it answers again this instance decides its"
                    + " calls alone (when-unavailable: local), out of its share of {} of the {} permits ({})", name(),
                    share, settings.permits(), settings.localPermits() > 0 ? "local-permits"
                            : context.fleet().instancesSeen(identity.baseName()) + " instance(s) Redis last showed");
        } else {
            log.warn("Semaphore '{}': Redis cannot be reached; until it answers again its calls run unguarded"
                    + " (when-unavailable: allow): the limit of {} does not hold", name(), settings.permits());
        }
        context.listeners().degradedModeChanged(name(), true);
    }

    /** Under the lock: this instance's share of the permits (per key for a keyed semaphore). */
    private int share() {
        return settings.localPermits() > 0 ? settings.localPermits()
                : context.fleet().share(identity.baseName(), settings.permits());
    }

    /** Under the lock: this instance's share of a capped semaphore's cap, in proportion to its share of a key. */
    private int capShare() {
        return settings.localPermits() > 0
                ? (int) ((long) settings.totalPermits() * settings.localPermits() / settings.permits())
                : context.fleet().share(identity.baseName(), settings.totalPermits());
    }

    private boolean fits(int count) {
        return !settling && inside() + count <= share() && (cap == null || cap.inside() + count <= capShare());
    }

    /** Under the lock: the wait gets a permit; the caller hears it once the lock is left. */
    private Runnable grant(Wait wait) {
        LocalPermit permit = new LocalPermit(name(), wait.count, wait.lease, this);
        held.add(permit);
        localHeld += wait.count;
        admitted++;
        cancelTimer(wait.deadline);
        return () -> {
            admittedWithoutRedis(wait.count, wait.startNanos);
            if (!wait.future.complete(permit)) {
                permit.release();
            }
        };
    }

    /** Under the lock: the wait ends without a permit; the caller hears it once the lock is left. */
    private Runnable refuse(Wait wait) {
        refused++;
        int share = share();
        String why = settling ? "Redis answers again and the instances write back their permits"
                : "this instance's share of " + share + " of the " + settings.permits()
                        + " permits (when-unavailable: local) stayed in use";
        return () -> {
            SemaphoreRejectedException refusal = new SemaphoreRejectedException(name(), wait.count, wait.maxWait,
                    SemaphoreRejectedException.Reason.LOCAL_SHARE_IN_USE, null,
                    "within " + wait.maxWait.toMillis() + " ms while Redis cannot be reached: " + why);
            context.listeners().rejected(name(), wait.count, refusal.reason());
            context.listeners().acquisitionEnded(name(), wait.count, Outcome.REJECTED, elapsed(wait.startNanos));
            wait.future.completeExceptionally(refusal);
        };
    }

    private void admittedWithoutRedis(int count, long startNanos) {
        context.listeners().admittedWithoutRedis(name(), count, mode());
        context.listeners().acquisitionEnded(name(), count, Outcome.ACQUIRED, elapsed(startNanos));
    }

    private static Duration elapsed(long startNanos) {
        return Duration.ofNanos(System.nanoTime() - startNanos);
    }

    /** Serves the waiters that fit now, in order (past the head too when not fair). */
    private void serve() {
        List<Runnable> outcomes = new ArrayList<>();
        lock.lock();
        try {
            for (Wait wait : List.copyOf(waits)) {
                if (fits(wait.count)) {
                    waits.remove(wait);
                    outcomes.add(grant(wait));
                } else if (settings.fair()) {
                    break;
                }
            }
            if (waits.isEmpty()) {
                cancelTimer(recheck);
                recheck = null;
            }
        } finally {
            lock.unlock();
        }
        outcomes.forEach(Runnable::run);
    }

    /** Under the lock: looks again every {@link #RECHECK} while callers wait. */
    private void recheckLater() {
        if (recheck == null) {
            recheck = context.scheduler().scheduleAtFixedRate(this::serve, RECHECK);
        }
    }

    private void deadlinePassed(Wait wait) {
        Runnable outcome = null;
        lock.lock();
        try {
            if (waits.remove(wait)) {
                outcome = refuse(wait);
            }
        } finally {
            lock.unlock();
        }
        if (outcome != null) {
            outcome.run();
        }
        serve();
    }

    private void cancelled(Wait wait) {
        lock.lock();
        try {
            waits.remove(wait);
        } finally {
            lock.unlock();
        }
        cancelTimer(wait.deadline);
        serve();
    }

    /** The reply of a write-back: the permit is in Redis now, or local again (and the next outage starts). */
    private void written(LocalPermit permit, @Nullable Permit redisPermit, @Nullable Throwable error) {
        boolean outageAgain = error != null && context.outage().found(error);
        if (error != null) {
            log.warn("Semaphore '{}': a permit granted on this instance could not be written back to Redis; it stays"
                    + " local{}", name(), outageAgain ? " and is written back when Redis answers again"
                    : ", counted in this instance's share only", error);
        }
        int left = permit.written(error == null ? redisPermit : null);
        lock.lock();
        try {
            localHeld -= left;
            if (error == null || !permit.isHeld()) {
                held.remove(permit);
            }
        } finally {
            lock.unlock();
        }
        if (outageAgain && permit.isHeld()) {
            // Degraded again, so that the next recovery writes it back.
            enter();
        }
        serve();
    }

    private static void cancelTimer(@Nullable ScheduledFuture<?> timer) {
        if (timer != null) {
            timer.cancel(false);
        }
    }
}
