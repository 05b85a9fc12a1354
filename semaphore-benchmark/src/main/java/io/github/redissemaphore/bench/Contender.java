package io.github.redissemaphore.bench;

import io.github.redissemaphore.core.Permit;
import io.github.redissemaphore.core.RedisSemaphore;
import io.github.redissemaphore.core.SemaphoreRegistry;
import io.github.redissemaphore.core.SemaphoreSettings;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.jspecify.annotations.Nullable;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RSemaphore;
import org.redisson.api.RedissonClient;

/**
 * One semaphore implementation under test, as one JVM (one client) sees it: the measures only
 * ever take and give back single permits through {@link Handle}, so they run unchanged on ours,
 * on Redisson and on the raw EVALSHA floor. Two contenders of the same kind on different clients
 * model two JVMs. A contender does not own its client; the benchmark closes the clients.
 */
interface Contender {

    /** How long a caller that waits is prepared to wait: longer than any measure. */
    Duration LONG_WAIT = Duration.ofMinutes(10);

    /** @return the name of the implementation, as printed */
    String label();

    /** @return its name in the results file: a JSON key, e.g. "ours", "redissonPermitExpirable" */
    String key();

    /** @return a semaphore of that name with that many permits, created in Redis if it is new */
    Handle semaphore(String name, int permits);

    /** One semaphore of a contender; a lease is whatever the implementation hands out. */
    interface Handle {

        /** @return a lease on one permit, or null when none is free; never waits */
        @Nullable Object tryAcquire();

        /** Gives the lease back. */
        void release(Object lease);

        /** @return completes with a lease once a permit is granted, waiting up to {@link #LONG_WAIT} */
        CompletableFuture<Object> acquireAsync();
    }

    /** @return ours, on this registry, with these settings (their permits replaced per semaphore) */
    static Contender ours(SemaphoreRegistry registry, SemaphoreSettings settings) {
        return new Ours(registry, settings);
    }

    /**
     * @return ours, capped: the permits are the cap of a capped semaphore over {@value Capped#KEYS}
     *         keys, each key allowed as many, the calls spread over the keys in turn: the cost of the
     *         two levels (issue 22) next to {@link #ours}
     */
    static Contender capped(SemaphoreRegistry registry, SemaphoreSettings settings) {
        return new Capped(registry, settings);
    }

    /**
     * @return ours with a queue bound ({@code max-waiters} {@value Bounded#MAX_WAITERS}, above what
     *         the contended case ever queues, so nobody is refused): the cost of the bound and of the
     *         predicted wait (issue 30) next to {@link #ours}
     */
    static Contender bounded(SemaphoreRegistry registry, SemaphoreSettings settings) {
        return new Bounded(registry, settings);
    }

    /**
     * @return ours with a rate ({@code rate-limit} {@value Rated#RATE_LIMIT} per minute, above what a
     *         measure grants in a minute, so nobody waits for a slot): the cost of the window (issue 32)
     *         next to {@link #ours}
     */
    static Contender rated(SemaphoreRegistry registry, SemaphoreSettings settings) {
        return new Rated(registry, settings);
    }

    /** @return Redisson's {@link RPermitExpirableSemaphore}, leases of {@code leaseTime} (it has no renewal) */
    static Contender permitExpirable(RedissonClient client, Duration leaseTime) {
        return new PermitExpirable(client, leaseTime);
    }

    /** @return Redisson's plain {@link RSemaphore}: a counter, no leases, no holder identity */
    static Contender rSemaphore(RedissonClient client) {
        return new PlainRedisson(client);
    }

    /**
     * @return the floor: what one EVALSHA of {@code return 1} per acquire and per release costs on a
     *         shared Lettuce connection, the client ours runs on; it cannot wait
     */
    static Contender floor(StatefulRedisConnection<String, String> connection) {
        return new Floor(connection);
    }

    /** Ours: {@link SemaphoreRegistry}, {@link RedisSemaphore}, {@link Permit}. */
    record Ours(SemaphoreRegistry registry, SemaphoreSettings settings) implements Contender {

        @Override
        public String label() {
            return "ours";
        }

        @Override
        public String key() {
            return "ours";
        }

        @Override
        public Handle semaphore(String name, int permits) {
            RedisSemaphore semaphore = registry.semaphore(name, settings.withPermits(permits));
            return new Handle() {
                @Override
                public @Nullable Object tryAcquire() {
                    return semaphore.tryAcquire().orElse(null);
                }

                @Override
                public void release(Object lease) {
                    ((Permit) lease).release();
                }

                @Override
                public CompletableFuture<Object> acquireAsync() {
                    return semaphore.acquireAsync(1, LONG_WAIT).thenApply(permit -> permit);
                }
            };
        }
    }

    /** Ours with a shared cap: every call on the next of {@value #KEYS} keys of one capped semaphore. */
    record Capped(SemaphoreRegistry registry, SemaphoreSettings settings) implements Contender {

        static final int KEYS = 4;

        @Override
        public String label() {
            return "ours, capped (" + KEYS + " keys)";
        }

        @Override
        public String key() {
            return "oursCapped";
        }

        @Override
        public Handle semaphore(String name, int permits) {
            SemaphoreSettings capped = settings.withPermits(permits).withTotalPermits(permits);
            List<RedisSemaphore> keys = IntStream.range(0, KEYS)
                    .mapToObj(key -> registry.semaphore(name, "t" + key, capped)).toList();
            AtomicInteger next = new AtomicInteger();
            return new Handle() {
                private RedisSemaphore nextKey() {
                    return keys.get(Math.floorMod(next.getAndIncrement(), KEYS));
                }

                @Override
                public @Nullable Object tryAcquire() {
                    return nextKey().tryAcquire().orElse(null);
                }

                @Override
                public void release(Object lease) {
                    ((Permit) lease).release();
                }

                @Override
                public CompletableFuture<Object> acquireAsync() {
                    return nextKey().acquireAsync(1, LONG_WAIT).thenApply(permit -> permit);
                }
            };
        }
    }

    /** Ours with {@code max-waiters}: the same calls, each waiting one carrying the bound. */
    record Bounded(SemaphoreRegistry registry, SemaphoreSettings settings) implements Contender {

        static final int MAX_WAITERS = 16;

        @Override
        public String label() {
            return "ours, max-waiters " + MAX_WAITERS;
        }

        @Override
        public String key() {
            return "oursBounded";
        }

        @Override
        public Handle semaphore(String name, int permits) {
            return new Ours(registry, settings.withMaxWaiters(MAX_WAITERS)).semaphore(name, permits);
        }
    }

    /** Ours with a {@code rate-limit}: the same calls, each grant taking a slot of the window too. */
    record Rated(SemaphoreRegistry registry, SemaphoreSettings settings) implements Contender {

        static final int RATE_LIMIT = 100_000;

        @Override
        public String label() {
            return "ours, rate-limit " + RATE_LIMIT + "/min";
        }

        @Override
        public String key() {
            return "oursRated";
        }

        @Override
        public Handle semaphore(String name, int permits) {
            return new Ours(registry, settings.withRateLimit(RATE_LIMIT, Duration.ofMinutes(1))).semaphore(name,
                    permits);
        }
    }

    /** Redisson's semaphore whose permits have ids and expire: the closest to ours. */
    record PermitExpirable(RedissonClient client, Duration leaseTime) implements Contender {

        @Override
        public String label() {
            return "Redisson RPermitExpirableSemaphore";
        }

        @Override
        public String key() {
            return "redissonPermitExpirable";
        }

        @Override
        public Handle semaphore(String name, int permits) {
            RPermitExpirableSemaphore semaphore = client.getPermitExpirableSemaphore(name);
            semaphore.trySetPermits(permits);
            long leaseMillis = leaseTime.toMillis();
            return new Handle() {
                @Override
                public @Nullable Object tryAcquire() {
                    try {
                        // A wait of 0: one script call, no subscription.
                        return semaphore.tryAcquire(0, leaseMillis, TimeUnit.MILLISECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException("interrupted", e);
                    }
                }

                @Override
                public void release(Object lease) {
                    semaphore.release((String) lease);
                }

                @Override
                public CompletableFuture<Object> acquireAsync() {
                    return semaphore.acquireAsync(leaseMillis, TimeUnit.MILLISECONDS).toCompletableFuture()
                            .thenApply(id -> id);
                }
            };
        }
    }

    /** Redisson's plain counting semaphore. */
    record PlainRedisson(RedissonClient client) implements Contender {

        @Override
        public String label() {
            return "Redisson RSemaphore";
        }

        @Override
        public String key() {
            return "redissonSemaphore";
        }

        @Override
        public Handle semaphore(String name, int permits) {
            RSemaphore semaphore = client.getSemaphore(name);
            semaphore.trySetPermits(permits);
            return new Handle() {
                @Override
                public @Nullable Object tryAcquire() {
                    return semaphore.tryAcquire() ? Boolean.TRUE : null;
                }

                @Override
                public void release(Object lease) {
                    semaphore.release();
                }

                @Override
                public CompletableFuture<Object> acquireAsync() {
                    return semaphore.acquireAsync().toCompletableFuture().thenApply(none -> Boolean.TRUE);
                }
            };
        }
    }

    /**
     * The raw floor: a script that does nothing, through the plain Lettuce API. Like ours and
     * Redisson, it loads its script again when Redis answers NOSCRIPT (the cache was flushed).
     */
    final class Floor implements Contender {

        private static final String SCRIPT = "return 1";

        private final RedisCommands<String, String> redis;
        private final String sha;

        Floor(StatefulRedisConnection<String, String> connection) {
            this.redis = connection.sync();
            this.sha = redis.scriptLoad(SCRIPT);
        }

        private long call() {
            try {
                return redis.evalsha(sha, ScriptOutputType.INTEGER);
            } catch (RedisNoScriptException e) {
                redis.scriptLoad(SCRIPT);
                return redis.evalsha(sha, ScriptOutputType.INTEGER);
            }
        }

        @Override
        public String label() {
            return "floor: Lettuce, EVALSHA 'return 1'";
        }

        @Override
        public String key() {
            return "floor";
        }

        @Override
        public Handle semaphore(String name, int permits) {
            return new Handle() {
                @Override
                public @Nullable Object tryAcquire() {
                    return call() == 1 ? Boolean.TRUE : null;
                }

                @Override
                public void release(Object lease) {
                    call();
                }

                @Override
                public CompletableFuture<Object> acquireAsync() {
                    throw new UnsupportedOperationException("the floor cannot wait");
                }
            };
        }
    }
}
