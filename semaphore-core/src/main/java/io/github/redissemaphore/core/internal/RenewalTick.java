package io.github.redissemaphore.core.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import org.springframework.scheduling.TaskScheduler;

/**
 * The one periodic task of one semaphore in this JVM. It runs only while the JVM holds renewable
 * permits (every leaseTime/3) or has waiters (every waiter tick, and when the earliest lease ends)
 * on the semaphore, and stops by itself when neither is left, so an idle semaphore costs nothing.
 */
final class RenewalTick {

    private final DefaultRedisSemaphore semaphore;
    private final TaskScheduler scheduler;
    /** Guards {@link #next} and {@link #stopped}; a lock, as every lock of the library (virtual threads). */
    private final ReentrantLock lock = new ReentrantLock();
    private ScheduledFuture<?> next;
    private boolean stopped;

    RenewalTick(DefaultRedisSemaphore semaphore, TaskScheduler scheduler) {
        this.semaphore = semaphore;
        this.scheduler = scheduler;
    }

    /** Something to renew or heartbeat appeared: make sure a tick comes in time for it. */
    void wake() {
        wakeWithin(semaphore.leases.tickDelay());
    }

    /** Makes sure the next tick comes within {@code delay} (null: no tick needed). */
    void wakeWithin(Duration delay) {
        lock.lock();
        try {
            if (stopped || delay == null) {
                return;
            }
            if (next != null && next.getDelay(TimeUnit.NANOSECONDS) <= delay.toNanos()) {
                return;
            }
            if (next != null) {
                next.cancel(false);
            }
            next = scheduler.schedule(this::run, Instant.now().plus(delay));
        } finally {
            lock.unlock();
        }
    }

    void stop() {
        lock.lock();
        try {
            stopped = true;
            if (next != null) {
                next.cancel(false);
                next = null;
            }
        } finally {
            lock.unlock();
        }
    }

    private void run() {
        lock.lock();
        try {
            next = null;
        } finally {
            lock.unlock();
        }
        try {
            semaphore.leases.renewNow();
        } finally {
            wake();
        }
    }
}
