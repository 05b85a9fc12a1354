package io.github.redissemaphore.core.internal;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreException;
import io.github.redissemaphore.core.SemaphoreListener.Outcome;
import io.github.redissemaphore.core.SemaphoreRejectedException;
import io.github.redissemaphore.core.SemaphoreSettings;
import io.github.redissemaphore.core.SemaphoreState;
import io.github.redissemaphore.core.SemaphoreUnavailableException;
import io.github.redissemaphore.core.redis.SemaphoreCommands;
import io.github.redissemaphore.core.redis.SemaphoreCommands.Acquired;
import io.github.redissemaphore.core.redis.SemaphoreCommands.Renewed;
import io.github.redissemaphore.core.redis.SemaphoreCommands.Usage;
import io.github.redissemaphore.core.redis.SemaphoreKeys;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
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
    /** How long past its deadline a wait may take to learn from Redis whether it was granted. */
    private static final Duration ANSWER_GRACE = Duration.ofMillis(150);
    /** How often a clean-up that Redis did not answer is sent again. */
    private static final Duration RETRY = Duration.ofSeconds(1);

    private final DefaultSemaphoreRegistry registry;
    private final SemaphoreCommands commands;
    private final SemaphoreSettings settings;
    private final SemaphoreKeys keys;
    private final Map<String, DefaultPermit> held = new ConcurrentHashMap<>();
    private final Map<String, PendingAcquisition> waiting = new ConcurrentHashMap<>();
    private final RenewalTick tick;
    /** Where grants of this semaphore's waiters reach this JVM. */
    private final String inboxChannel;
    private volatile boolean renewalFailing;
    /** A tick's renewal is in flight. */
    private final AtomicBoolean renewing = new AtomicBoolean();
    /** A confirmation of claims is scheduled and has not started yet. */
    private final AtomicBoolean confirming = new AtomicBoolean();
    private final NewestUsage newestUsage = new NewestUsage();
    /** Guards retirement against acquisitions starting at the same moment; see {@link #retireIfIdle()}. */
    private final Object lifecycle = new Object();
    private int starting;
    private boolean retired;
    /** Shutdown has begun: no acquisition starts any more. */
    private boolean closing;

    DefaultRedisSemaphore(DefaultSemaphoreRegistry registry, String name, SemaphoreSettings settings) {
        this.registry = registry;
        this.commands = registry.commands();
        this.settings = settings;
        this.keys = SemaphoreKeys.of(registry.keyPrefix(), name);
        this.tick = new RenewalTick(this, registry.scheduler());
        this.inboxChannel = registry.inbox().channel(keys);
    }

    @Override
    public String name() {
        return keys.name();
    }

    @Override
    public SemaphoreSettings settings() {
        return settings;
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
        try {
            return Optional.of(await(start(permits, maxWait, false)));
        } catch (SemaphoreRejectedException e) {
            return Optional.empty();
        }
    }

    @Override
    public Permit acquire() throws InterruptedException {
        return await(start(1, settings.waitTime(), false));
    }

    @Override
    public CompletableFuture<Permit> acquireAsync(int permits, Duration maxWait) {
        return start(permits, maxWait, true).future;
    }

    @Override
    public SemaphoreState state() {
        SemaphoreCommands.State reply = commands.state(keys, settings.permits(), STATE_LIST_LIMIT);
        seen(reply.usage());
        return reply.state();
    }

    /**
     * Starts an acquisition. {@code async}: the acquire call is sent and its reply handled on the
     * callback pool (acquireAsync: the caller's thread is never blocked); else the caller's thread
     * waits for the reply and handles it.
     */
    private PendingAcquisition start(int permits, Duration maxWait, boolean async) {
        settings.checkRequest(permits);
        SemaphoreSettings.checkWait("maxWait", maxWait);
        synchronized (lifecycle) {
            if (closing) {
                throw new SemaphoreUnavailableException("The semaphore registry is closed");
            }
            if (retired) {
                // Dropped from the registry while idle: a caller still holding this object is
                // served by the registry's live semaphore of the same name, which shutdown covers.
                return registry.live(this).start(permits, maxWait, async);
            }
            starting++;
        }
        try {
            return begin(permits, maxWait, async);
        } catch (RuntimeException | Error e) {
            started();
            throw e;
        }
    }

    /** An acquisition's first reply has been handled (or it never got to send one). */
    private void started() {
        synchronized (lifecycle) {
            if (--starting == 0) {
                lifecycle.notifyAll();
            }
        }
    }

    /**
     * Retires this semaphore if this JVM neither holds nor waits on it, nor is starting to: it
     * will never hold anything again (new acquisitions go to a live one), so the registry may
     * forget it.
     */
    boolean retireIfIdle() {
        synchronized (lifecycle) {
            if (starting > 0 || !held.isEmpty() || !waiting.isEmpty()) {
                return false;
            }
            retired = true;
        }
        tick.stop();
        registry.inbox().forget(keys);
        return true;
    }

    /** Once it returns normally, {@link #started()} is called exactly once, when the first reply has been handled. */
    private PendingAcquisition begin(int permits, Duration maxWait, boolean async) {
        registry.checkOpen();
        PendingAcquisition pending = new PendingAcquisition(Ids.permitId(), permits, maxWait, System.nanoTime());
        pending.future.whenComplete((permit, error) -> ended(pending, permit, error));
        boolean wait = !maxWait.isZero();
        if (wait) {
            registry.inbox().listenFor(keys);
            waiting.put(pending.id, pending);
            registry.route(pending.id, this);
        }
        if (async) {
            long sentNanos = System.nanoTime();
            acquireCall(pending, wait).whenCompleteAsync((reply, error) -> {
                try {
                    if (apply(pending, reply, error, sentNanos, false)) {
                        timeWait(pending);
                    }
                } finally {
                    started();
                }
            }, registry.callbacks());
        } else {
            try {
                if (send(pending, wait, true)) {
                    timeWait(pending);
                }
            } finally {
                started();
            }
        }
        return pending;
    }

    /** The wait is timed from the caller's start, whenever the reply that queued it came. */
    private void timeWait(PendingAcquisition pending) {
        pending.deadline(registry.scheduler().schedule(() -> deadlinePassed(pending),
                Instant.now().plusNanos(Math.max(pending.deadlineNanos - System.nanoTime(), 0))));
    }

    private CompletableFuture<Acquired> acquireCall(PendingAcquisition pending, boolean wait) {
        return commands.acquireAsync(keys, settings.permits(), pending.id, pending.count, settings.leaseTime(),
                wait, settings.fair(), registry.waiterHeartbeat(), inboxChannel, Ids.owner());
    }

    /**
     * Sends {@code acquire} for the pending acquisition (its first try on the caller's thread, or a
     * re-join after its queue entry vanished, on the callback pool) and handles the reply there.
     *
     * @param callersThread whether this is the caller's thread, whose interrupt ends its wait
     * @return whether Redis queued it and it still waits
     */
    private boolean send(PendingAcquisition pending, boolean wait, boolean callersThread) {
        long sentNanos = System.nanoTime();
        Acquired reply = null;
        Throwable error = null;
        try {
            reply = commands.await(keys, acquireCall(pending, wait));
        } catch (SemaphoreUnavailableException e) {
            error = e;
        }
        return apply(pending, reply, error, sentNanos, callersThread);
    }

    /**
     * Applies the reply (or failure) of an {@code acquire} call. A reply that finds the wait ended
     * meanwhile undoes what the call did, as {@link PendingAcquisition} describes.
     *
     * @param callersThread whether this runs on the caller's thread, which waited for the reply
     * @return whether Redis queued it and it still waits
     */
    private boolean apply(PendingAcquisition pending, Acquired reply, Throwable error, long sentNanos,
                          boolean callersThread) {
        if (error != null) {
            // An interrupt of the caller stops the client library's wait too: that is no outage.
            Throwable failure = callersThread && Thread.currentThread().isInterrupted()
                    ? new CancellationException("interrupted while acquiring semaphore '" + name() + "'")
                    : SemaphoreCommands.failure(error);
            if (pending.end(false) != null) {
                forget(pending);
                pending.future.completeExceptionally(failure);
            }
            if (!pending.isGranted()) {
                // The call may have reached Redis before failing here: take back what it may have
                // done, in the background.
                undo(pending);
            }
            return false;
        }
        seen(reply.usage());
        switch (reply.status()) {
            case GRANTED -> {
                if (pending.end(true) != null) {
                    grant(pending, reply.token(), sentNanos, true);
                } else if (!pending.isGranted()) {
                    undo(pending);
                }
            }
            case QUEUED -> {
                if (pending.queued()) {
                    tick.wake();
                    return true;
                }
                if (!pending.isGranted()) {
                    undo(pending);
                }
            }
            case REFUSED -> {
                if (pending.end(false) != null) {
                    reject(pending);
                }
            }
        }
        return false;
    }

    private Permit await(PendingAcquisition pending) throws InterruptedException {
        try {
            return pending.future.get();
        } catch (InterruptedException e) {
            abandon(pending, new CancellationException("interrupted while waiting for semaphore '" + name() + "'"));
            throw e;
        } catch (CancellationException e) {
            if (Thread.interrupted()) {
                throw new InterruptedException(e.getMessage());
            }
            throw e;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof SemaphoreException cause) {
                throw cause;
            }
            throw new SemaphoreException("Acquiring semaphore '" + name() + "' failed", e.getCause());
        }
    }

    private void ended(PendingAcquisition pending, Permit permit, Throwable error) {
        Outcome outcome = permit != null ? Outcome.ACQUIRED
                : error instanceof SemaphoreRejectedException ? Outcome.REJECTED : Outcome.ERROR;
        registry.listeners().acquisitionEnded(name(), pending.count, outcome, pending.waited());
        if (error instanceof CancellationException) {
            abandon(pending, error);
        }
    }

    /**
     * The wait ends without a permit (interrupt, cancel, shutdown): leave the queue, leak nothing.
     *
     * @return the clean-up in Redis, done when Redis answered (or gave up on)
     */
    private CompletableFuture<Void> abandon(PendingAcquisition pending, Throwable cause) {
        PendingAcquisition.Phase from = pending.end(false);
        if (from == null) {
            // Granted meanwhile: the permit goes back as soon as it exists.
            pending.future.thenAccept(Permit::release);
            return CompletableFuture.completedFuture(null);
        }
        forget(pending);
        pending.future.completeExceptionally(cause);
        return from == PendingAcquisition.Phase.QUEUED ? cleanUp(pending.id) : CompletableFuture.completedFuture(null);
    }

    private void deadlinePassed(PendingAcquisition pending) {
        long sentNanos = System.nanoTime();
        PendingAcquisition.Phase from = pending.end(false);
        if (from == null) {
            return;
        }
        if (from != PendingAcquisition.Phase.QUEUED) {
            // A re-join is in flight; its reply takes back whatever it did.
            reject(pending);
            return;
        }
        // Asynchronous: the scheduler thread is free at once, whatever Redis does. The caller hears
        // by max(wait, command timeout) + ANSWER_GRACE at the latest: if Redis has not said by then
        // whether the wait was granted meanwhile, the caller gets SemaphoreUnavailableException
        // and the clean-up goes on in the background (giving back a grant it finds).
        AtomicBoolean answered = new AtomicBoolean();
        long answerBy = pending.startNanos + Math.max(pending.maxWait.toNanos(), commands.timeout().toNanos())
                + ANSWER_GRACE.toNanos();
        ScheduledFuture<?> timer = registry.scheduler().schedule(() -> {
            if (answered.compareAndSet(false, true)) {
                forget(pending);
                pending.future.completeExceptionally(new SemaphoreUnavailableException("The wait for semaphore '"
                        + name() + "' ended, and Redis did not answer in time to say whether it had been granted"));
            }
        }, Instant.now().plusNanos(Math.max(answerBy - System.nanoTime(), 0)));
        commands.cancelAsync(keys, settings.permits(), pending.id, false).whenCompleteAsync((reply, error) -> {
            timer.cancel(false);
            if (!answered.compareAndSet(false, true)) {
                // The caller has been answered: whatever this found goes back.
                cleanUp(pending.id);
            } else if (error != null) {
                forget(pending);
                pending.future.completeExceptionally(SemaphoreCommands.failure(error));
                // The entry may still be there, or granted: take it back once Redis answers.
                cleanUp(pending.id);
            } else {
                seen(reply.usage());
                if (reply.grantedToken() > 0) {
                    // Granted just before the deadline (its message is still on the way); cancel
                    // confirmed its claim as a full lease.
                    grant(pending, reply.grantedToken(), sentNanos, true);
                } else {
                    reject(pending);
                }
            }
        }, registry.callbacks());
    }

    /**
     * Waiter {@code id} was granted ({@code token > 0}) or can never be ({@code token == 0}):
     * the inbox heard it ({@code confirmed} false: the grant is a claim to confirm) or a renew or
     * cancel reply said so (confirmed: that call extended the claim to a full lease).
     */
    void granted(String id, long token, long heardNanos, boolean confirmed) {
        PendingAcquisition pending = waiting.get(id);
        if (pending == null) {
            return;
        }
        if (token > 0) {
            if (pending.end(true) != null) {
                grant(pending, token, heardNanos, confirmed);
            }
        } else if (pending.end(false) != null) {
            reject(pending);
        }
    }

    private void grant(PendingAcquisition pending, long token, long heardNanos, boolean confirmed) {
        // A claim lasts the waiter heartbeat from its grant, which was before we heard of it:
        // half of it is what this JVM counts on until the confirmation comes back.
        long leaseEnds = heardNanos + (confirmed ? settings.leaseTime() : registry.waiterHeartbeat().dividedBy(2))
                .toNanos();
        DefaultPermit permit = new DefaultPermit(this, pending.id, pending.count, token, leaseEnds, confirmed);
        // Held before it stops waiting, so the semaphore never looks idle in between.
        held.put(permit.id(), permit);
        forget(pending);
        registry.listeners().permitHeld(permit);
        if (!confirmed) {
            confirmSoon();
        }
        tick.wake();
        if (!pending.future.complete(permit)) {
            permit.release();
        }
    }

    private void reject(PendingAcquisition pending) {
        forget(pending);
        pending.future.completeExceptionally(
                new SemaphoreRejectedException(name(), pending.count, pending.maxWait));
    }

    private void forget(PendingAcquisition pending) {
        if (waiting.remove(pending.id) != null) {
            registry.unroute(pending.id);
        }
    }

    /** Takes back, off the caller's thread, whatever a call for this acquisition may have left in Redis. */
    private void undo(PendingAcquisition pending) {
        cleanUp(pending.id);
    }

    /**
     * Takes waiter or claim {@code id} out of Redis (giving back a grant it got meanwhile), without
     * blocking a thread, and again every second while Redis does not answer, until the entry's own
     * lease or heartbeat would have ended it anyway.
     */
    private CompletableFuture<Void> cleanUp(String id) {
        return persist("take " + id + " out of", () -> commands.cancelAsync(keys, settings.permits(), id, true),
                reply -> seen(reply.usage()));
    }

    /**
     * Sends a call that must reach Redis (a clean-up): on failure it is sent again every
     * {@link #RETRY}, for as long as the entry it is about could still be in Redis (its lease or
     * heartbeat, whichever is longer), and not after shutdown.
     *
     * @return completes when Redis answered, or when it gave up
     */
    private <T> CompletableFuture<Void> persist(String what, Supplier<CompletableFuture<T>> call, Consumer<T> onReply) {
        long untilNanos = System.nanoTime() + Math.max(settings.leaseTime().toNanos(), registry.waiterHeartbeat().toNanos());
        CompletableFuture<Void> done = new CompletableFuture<>();
        Runnable[] attempt = new Runnable[1];
        attempt[0] = () -> call.get().whenCompleteAsync((reply, error) -> {
            if (error == null) {
                onReply.accept(reply);
                done.complete(null);
            } else if (System.nanoTime() - untilNanos < 0 && !registry.isClosed()) {
                try {
                    registry.scheduler().schedule(attempt[0], Instant.now().plus(RETRY));
                } catch (RejectedExecutionException e) {
                    done.complete(null);
                }
            } else {
                log.debug("Could not {} semaphore '{}'; it ends with its lease or heartbeat", what, name(), error);
                done.complete(null);
            }
        }, registry.callbacks());
        attempt[0].run();
        return done;
    }

    /** Confirms claims (grants heard from the inbox) with one renew call, soon, off the inbox thread. */
    private void confirmSoon() {
        if (confirming.compareAndSet(false, true)) {
            registry.scheduler().schedule(this::confirmNow, Instant.now());
        }
    }

    private void confirmNow() {
        confirming.set(false);
        List<DefaultPermit> claims = held.values().stream().filter(DefaultPermit::needsConfirmation).toList();
        if (!claims.isEmpty()) {
            renew(claims, List.of(), false);
        }
    }

    /**
     * Ends any lease by id, whichever JVM holds it (an operator's tool: the holder learns of it at
     * its next renewal and sees its permit lost).
     *
     * @return whether the id held permits
     */
    public boolean forceRelease(String permitId) {
        SemaphoreCommands.Released reply = commands.release(keys, settings.permits(), permitId);
        seen(reply.usage());
        return reply.released();
    }

    /**
     * Called by the permit, once, when its holder releases it. The caller waits for the reply (at
     * most the command timeout) so the permit is free when release() returns; if Redis does not
     * answer, the release is sent again in the background until the lease would have ended anyway.
     */
    void released(DefaultPermit permit) {
        ended(permit);
        try {
            seen(commands.release(keys, settings.permits(), permit.id()).usage());
        } catch (SemaphoreUnavailableException e) {
            log.warn("Could not release {} of semaphore '{}' ({}); retrying until Redis answers or the lease ends,"
                    + " within {}", permit.id(), name(), e.getMessage(), settings.leaseTime());
            releaseInBackground(permit);
        }
    }

    private CompletableFuture<Void> releaseInBackground(DefaultPermit permit) {
        return persist("release " + permit.id() + " of", () -> commands.releaseAsync(keys, settings.permits(),
                permit.id()), reply -> seen(reply.usage()));
    }

    private void ended(DefaultPermit permit) {
        if (held.remove(permit.id()) != null) {
            registry.listeners().permitEnded(permit);
        }
    }

    /** @return when the next tick is due, or null when nothing needs one */
    Duration tickDelay() {
        Duration delay = null;
        if (settings.autoRenew() && !held.isEmpty()) {
            delay = settings.leaseTime().dividedBy(3);
        }
        boolean claims = !settings.autoRenew() && held.values().stream().anyMatch(DefaultPermit::needsConfirmation);
        if ((claims || !waiting.isEmpty()) && (delay == null || registry.waiterTick().compareTo(delay) < 0)) {
            delay = registry.waiterTick();
        }
        return delay;
    }

    /**
     * One tick: a single renew call for every lease (or, without auto-renewal, every claim still
     * to confirm) and every waiter this JVM has on this semaphore.
     */
    void renewNow() {
        List<DefaultPermit> leases = held.values().stream()
                .filter(permit -> settings.autoRenew() || permit.needsConfirmation()).toList();
        List<PendingAcquisition> waiters = waiting.values().stream().filter(PendingAcquisition::isQueued).toList();
        if (leases.isEmpty() && waiters.isEmpty()) {
            return;
        }
        if (!renewing.compareAndSet(false, true)) {
            // The last renewal has not come back yet (Redis slow or down): no second one on top;
            // the watchdog of the first reports leases that run out meanwhile.
            return;
        }
        renew(leases, waiters, true);
    }

    /**
     * Renews these leases and heartbeats these waiters in one call. Replies are read against what
     * each id was when the call was sent (a lease, or a confirmed queue entry), never against what
     * the maps hold by the time the reply arrives.
     */
    private void renew(List<DefaultPermit> leases, List<PendingAcquisition> waiters, boolean tick) {
        List<String> ids = new ArrayList<>(leases.size() + waiters.size());
        leases.forEach(permit -> ids.add(permit.id()));
        waiters.forEach(pending -> ids.add(pending.id));
        long sentNanos = System.nanoTime();
        watchLeases(leases);
        commands.renewAsync(keys, settings.permits(), registry.waiterHeartbeat(), ids).whenCompleteAsync((reply, error) -> {
            if (tick) {
                renewing.set(false);
            }
            if (error != null) {
                renewalFailed(leases, error);
            } else {
                renewed(leases, waiters, reply, sentNanos);
            }
        }, registry.callbacks());
    }

    /**
     * Reports a lease lost the moment it ends as this JVM measures it, if no renewal has come back
     * by then: one timer per renewal sent, at the earliest end among its leases, run on the
     * scheduler that no Redis call ever blocks.
     */
    private void watchLeases(List<DefaultPermit> leases) {
        long earliest = leases.stream().mapToLong(DefaultPermit::leaseEndsNanos).min().orElse(Long.MAX_VALUE);
        if (earliest == Long.MAX_VALUE) {
            return;
        }
        try {
            registry.scheduler().schedule(() -> leases.stream().filter(this::aboutToEnd)
                            .forEach(permit -> lostLocally(permit, "its lease was about to run out and no renewal had"
                                    + " come back from Redis")),
                    Instant.now().plusNanos(Math.max(earliest - lossMarginNanos() - System.nanoTime(), 0)));
        } catch (RejectedExecutionException e) {
            // shutting down
        }
    }

    /**
     * How long before a lease's local end the watchdog gives it up: a holder must hear of the
     * loss before another party can have the permit, even when the timer runs a little late on a
     * busy machine. A tenth of the lease, at most 500 ms.
     */
    private long lossMarginNanos() {
        return Math.min(settings.leaseTime().toNanos() / 10, Duration.ofMillis(500).toNanos());
    }

    /** @return whether the lease ends within the loss margin, as this JVM measures it */
    private boolean aboutToEnd(DefaultPermit permit) {
        return permit.leaseEndsNanos() - lossMarginNanos() - System.nanoTime() <= 0;
    }

    /**
     * A lease given up by this JVM while Redis may still hold it (a renewal that comes back late
     * could even have extended it): it is released in the background, so it never blocks a permit
     * for longer than it has to.
     */
    private void lostLocally(DefaultPermit permit, String why) {
        if (permit.lost(why)) {
            ended(permit);
            registry.listeners().leaseLost(permit);
            releaseInBackground(permit);
        }
    }

    private void renewalFailed(List<DefaultPermit> leases, Throwable error) {
        if (!renewalFailing) {
            log.warn("Renewing semaphore '{}' failed, retrying every tick: {}", name(),
                    SemaphoreCommands.failure(error).getMessage());
            renewalFailing = true;
        }
        leases.stream().filter(this::aboutToEnd)
                .forEach(permit -> lostLocally(permit, "its lease was about to run out and Redis could not be reached"));
    }

    private void renewed(List<DefaultPermit> leases, List<PendingAcquisition> waiters, Renewed reply, long sentNanos) {
        renewalFailing = false;
        seen(reply.usage());
        if (reply.renewed() > 0) {
            registry.listeners().leasesRenewed(name(), reply.renewed());
        }
        for (int i = 0; i < leases.size(); i++) {
            if (reply.statuses().get(i) > 0) {
                leases.get(i).renewed(sentNanos, settings.leaseTime().toNanos());
            } else {
                lost(leases.get(i), "Redis no longer has it (expired, released by force, or wiped)");
            }
        }
        for (int i = 0; i < waiters.size(); i++) {
            long status = reply.statuses().get(leases.size() + i);
            PendingAcquisition pending = waiters.get(i);
            if (status > 0) {
                granted(pending.id, status, sentNanos, true);
            } else if (status == Renewed.GONE && pending.hasTimeLeft() && pending.requeue()) {
                // Redis lost the entry (a restart without data, a failover, eviction) while this
                // caller still waits: it joins again, at the back.
                log.debug("The wait {} for semaphore '{}' was no longer in Redis; it joins the queue again at"
                        + " the back", pending.id, name());
                send(pending, true, false);
            }
        }
    }

    private void lost(DefaultPermit permit, String why) {
        if (permit.lost(why)) {
            ended(permit);
            registry.listeners().leaseLost(permit);
        }
    }

    /**
     * Lets no acquisition start any more, and waits for those starting now (each within one
     * command timeout) to be in the queue or done, so shutdown ends every one of them: none can
     * slip into the queue behind it and wait for a deadline that a stopped scheduler never runs.
     */
    private void awaitStarts() {
        synchronized (lifecycle) {
            closing = true;
            while (starting > 0) {
                try {
                    lifecycle.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
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
        waiting.values().forEach(pending -> cleanUps.add(abandon(pending, closed)));
        // All releases at once, not one command timeout after another while Redis is down.
        held.values().forEach(permit -> {
            if (permit.markReleased()) {
                ended(permit);
                cleanUps.add(releaseInBackground(permit));
            }
        });
        return CompletableFuture.allOf(cleanUps.toArray(CompletableFuture[]::new));
    }

    /**
     * Takes in the usage figures of a reply: passes them on, and when this JVM has waiters, makes
     * sure it calls Redis again the moment the earliest lease ends, so a lease that ends without
     * a release is handed on at its deadline, not at the next tick.
     */
    private void seen(Usage usage) {
        report(usage);
        if (usage.earliestLeaseEndMillis() >= 0 && usage.waiters() > 0 && !waiting.isEmpty()) {
            tick.wakeWithin(Duration.ofMillis(usage.earliestLeaseEndMillis() + 1));
        }
    }

    private void report(Usage usage) {
        newestUsage.offer(usage, figures -> registry.listeners().usageReported(name(), figures.limit(),
                figures.used(), figures.waiters()));
    }

    @Override
    public String toString() {
        return "RedisSemaphore[" + name() + ", " + settings + "]";
    }
}
