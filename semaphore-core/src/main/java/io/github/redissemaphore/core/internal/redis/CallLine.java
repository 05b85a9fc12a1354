package io.github.redissemaphore.core.internal.redis;

import java.util.Objects;
import java.util.PriorityQueue;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * The line of calls of {@link RedisConnections}: each call's place in it (calls are numbered as
 * they are made), and the calls made while no connection was open (or refused with {@code READONLY},
 * to be sent again), waiting in the order they were made ({@link WaitingCall}). Every method but
 * {@link #call} runs under the lock of {@link RedisConnections}: a call goes out on the connection
 * in order.
 */
final class CallLine {

    /** Wraps a call that waits for a connection so it is sent in the caller's observation. */
    private final UnaryOperator<Runnable> inCallersScope;
    /** The order of the calls made: a call refused with READONLY goes back in line where it was. */
    private long made;
    /** Calls made while no connection was open (or sent again), in the order they were made. */
    private final PriorityQueue<WaitingCall> waiting = new PriorityQueue<>(WaitingCall.IN_ORDER);

    /** @param inCallersScope wraps a task so that it runs in the caller's observation, wherever it runs */
    CallLine(UnaryOperator<Runnable> inCallersScope) {
        this.inCallersScope = Objects.requireNonNull(inCallersScope, "inCallersScope");
    }

    /** @return the place in line of the call made now */
    long nextPlace() {
        return made++;
    }

    /**
     * Any thread: it only wraps the call.
     *
     * @param order  the call's place in line ({@link #nextPlace()})
     * @param sendOn sends the call on the connection it is given, once there is one
     * @return the call, to wait in line ({@link #add}) until then
     */
    WaitingCall call(long order, CompletableFuture<?> reply, Consumer<Link> sendOn) {
        return new WaitingCall(order, reply, inCallersScope, sendOn);
    }

    /** {@code call} waits in line, in its place. */
    void add(WaitingCall call) {
        waiting.add(call);
    }

    /** @return whether no call waits */
    boolean isEmpty() {
        return waiting.isEmpty();
    }

    /** Drops the calls whose caller gave up: they are not sent at all. */
    void dropGivenUp() {
        waiting.removeIf(WaitingCall::givenUp);
    }

    /** Sends every waiting call whose caller still waits, in order. */
    void drain(Link open) {
        for (WaitingCall next = waiting.poll(); next != null; next = waiting.poll()) {
            next.sendOn(open);
        }
    }

    /** Fails every waiting call: it will never be sent. */
    void fail(RuntimeException failure) {
        for (WaitingCall next = waiting.poll(); next != null; next = waiting.poll()) {
            next.fail(failure);
        }
    }
}
