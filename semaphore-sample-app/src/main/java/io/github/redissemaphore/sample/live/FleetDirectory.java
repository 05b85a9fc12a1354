package io.github.redissemaphore.sample.live;

import io.github.redissemaphore.sample.SampleProperties;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.web.server.WebServer;
import org.springframework.boot.web.server.context.WebServerInitializedEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.SmartLifecycle;
import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.stereotype.Component;

/**
 * The instances of the sample that share this Redis and key prefix, so that the live view can
 * name the instance of every holder and waiter, link to the other instances' pages and spread a
 * burst over all of them. Each instance announces itself once its web server is up and every
 * {@link #HEARTBEAT} after; one that stops announcing drops out after {@link #EXPIRY}, one that
 * shuts down leaves at once.
 *
 * <p>Key: {@code <distributed-semaphore.key-prefix>:sample:instances}, a sorted set of
 * {@link FleetMember#encode() encoded members} scored by the time (epoch ms) they expire.
 *
 * <p>A lifecycle in the last phase: it starts after the web server and stops before it and
 * before the Redis connections.
 */
@Component
public class FleetDirectory implements ApplicationListener<WebServerInitializedEvent>, SmartLifecycle {

    private static final Log LOG = LogFactory.getLog(FleetDirectory.class);
    static final Duration HEARTBEAT = Duration.ofSeconds(2);
    /** Several missed heartbeats, and room for clocks of different machines. */
    static final Duration EXPIRY = Duration.ofSeconds(15);

    private final StringRedisTemplate redis;
    private final String key;
    private final String instanceName;
    private final String address;
    private final ScheduledExecutorService heartbeat = Executors.newSingleThreadScheduledExecutor(runnable -> {
        Thread thread = new Thread(runnable, "live-view-heartbeat");
        thread.setDaemon(true);
        return thread;
    });
    private volatile @Nullable WebServer webServer;
    private volatile @Nullable FleetMember self;
    private volatile boolean running;

    public FleetDirectory(StringRedisTemplate redis, SampleProperties properties,
            @Value("${distributed-semaphore.key-prefix:semaphore}") String keyPrefix,
            @Value("${server.address:localhost}") String address) {
        this.redis = redis;
        this.key = keyPrefix + ":sample:instances";
        this.instanceName = properties.instanceName();
        this.address = address;
    }

    /** Notes the application's web server (a management server on a port of its own is not it). */
    @Override
    public void onApplicationEvent(WebServerInitializedEvent event) {
        if (event.getApplicationContext().getServerNamespace() == null) {
            webServer = event.getWebServer();
        }
    }

    @Override
    public void start() {
        running = true;
        WebServer server = webServer;
        if (server == null) {
            return; // no web server (a test without one): nothing to announce
        }
        int port = server.getPort();
        RequestThreads.prefixOf(server).thenAccept(requestThreads -> {
            self = new FleetMember(instanceName, "http://" + address + ":" + port, hostName(),
                    ProcessHandle.current().pid(), port, requestThreads);
            heartbeat.scheduleWithFixedDelay(this::announce, 0, HEARTBEAT.toMillis(), TimeUnit.MILLISECONDS);
        });
    }

    @Override
    public void stop() {
        running = false;
        heartbeat.shutdownNow();
        FleetMember me = self;
        if (me != null) {
            try {
                redis.opsForZSet().remove(key, me.encode());
            } catch (DataAccessException e) {
                LOG.debug("Could not leave the fleet (it drops out by itself): " + e.getMessage());
            }
        }
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** @return this instance, once its web server is up */
    public Optional<FleetMember> self() {
        return Optional.ofNullable(self);
    }

    /** @return the instances that announced themselves lately, this one included, by name */
    public List<FleetMember> members() {
        Set<String> encoded = redis.opsForZSet().rangeByScore(key, System.currentTimeMillis(), Double.POSITIVE_INFINITY);
        List<FleetMember> members = encoded == null ? List.of()
                : encoded.stream().flatMap(value -> FleetMember.decode(value).stream()).toList();
        FleetMember me = self;
        if (me != null && members.stream().noneMatch(member -> member.name().equals(me.name()))) {
            // Not announced yet, or Redis dropped it: this page still knows its own instance.
            members = Stream.concat(members.stream(), Stream.of(me)).toList();
        }
        return members.stream().sorted(Comparator.comparing(FleetMember::name)).toList();
    }

    private void announce() {
        try {
            long now = System.currentTimeMillis();
            FleetMember me = self;
            if (me == null) {
                return;
            }
            redis.opsForZSet().add(key, me.encode(), now + EXPIRY.toMillis());
            redis.opsForZSet().removeRangeByScore(key, Double.NEGATIVE_INFINITY, now);
            // An idle fleet leaves nothing behind.
            redis.expire(key, EXPIRY.multipliedBy(4));
        } catch (DataAccessException e) {
            // The page shows Redis trouble itself; the next heartbeat tries again.
            LOG.debug("Could not announce " + instanceName + " to the fleet: " + e.getMessage());
        }
    }

    /** The host name the library writes into owners (see the core's {@code Ids}). */
    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return ManagementFactory.getRuntimeMXBean().getName();
        }
    }
}
