package io.github.redissemaphore.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A loopback TCP proxy in front of a Redis server, to cut the network between a client and Redis
 * without touching either: a network partition on demand.
 *
 * <pre>{@code
 * try (TcpProxy proxy = TcpProxy.to(server)) {
 *     LettuceConnectionFactory behind = proxy.connectionFactory(Duration.ofSeconds(1));
 *     ...
 *     proxy.partition();   // both directions stop; every connection stays open
 *     ...
 *     proxy.heal();        // forwarding resumes on the same connections
 * }
 * }</pre>
 *
 * <ul>
 * <li>It listens on a free port of 127.0.0.1 ({@link #port()}) and, for every connection it
 *     accepts, opens one to the server and forwards bytes both ways.</li>
 * <li>{@link #partition()} stops forwarding in both directions <em>without closing anything</em>:
 *     the proxy stops reading and writing, so what either side sends is <em>held</em> (in the
 *     proxy's buffers and the kernel's socket buffers), nothing is answered, no connection is
 *     reset, and neither side sees an error: only silence, as in a real partition. Connections
 *     made during a partition are accepted (the kernel does that anyway) and connected to the
 *     server, but carry nothing until the partition heals. When it returns, not one more byte
 *     crosses the proxy.</li>
 * <li>{@link #heal()} resumes forwarding on the same connections and <em>delivers what was
 *     held</em>, in order, as TCP does when a partition heals before its retransmissions give up:
 *     the server then runs the commands sent during the partition, and a client that timed them
 *     out meanwhile gets their late replies (Lettuce matches them to the timed-out commands).
 *     Nothing is dropped, so the byte streams are never corrupted. {@link #resetConnections()}
 *     closes every open connection instead, like a partition long enough for TCP to give up.</li>
 * <li>{@link #delayReplies(Duration)} holds every byte the server sends for that long before the
 *     client gets it (what the client sends still reaches the server at once): a healthy Redis
 *     whose replies come late, as on a busy machine or a slow network. Order is kept; a partition
 *     holds delayed bytes too.</li>
 * <li>{@link #close()} destroys the connection factories it handed out, closes every connection
 *     and the listening socket, and stops its thread.</li>
 * </ul>
 *
 * <p>Threads: exactly one, a daemon ({@code tcp-proxy-<port>}), running a NIO selector over every
 * connection whatever their number; it never blocks on a peer (it only connects to the server,
 * which is local and either listening or refusing at once).
 */
public final class TcpProxy implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(TcpProxy.class);
    private static final int BUFFER_SIZE = 64 * 1024;
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(1);
    private static final Duration CONTROL_TIMEOUT = Duration.ofSeconds(5);

    private final InetSocketAddress upstream;
    private final ServerSocketChannel listener;
    private final String host;
    private final int port;
    private final Selector selector;
    private final Thread loop;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    /** The open connections; touched by the loop thread only. */
    private final List<Link> links = new ArrayList<>();
    private final ConnectionFactories factories = new ConnectionFactories();
    private final AtomicLong forwarded = new AtomicLong();
    private final AtomicInteger open = new AtomicInteger();
    private final AtomicInteger accepted = new AtomicInteger();
    /** Written by the loop thread only (through {@link #onLoop}), read anywhere. */
    private volatile boolean partitioned;
    private volatile boolean closed;
    /** How long bytes from the server are held before the client gets them; written on the loop thread. */
    private volatile long replyDelayNanos;

    private TcpProxy(String upstreamHost, int upstreamPort) {
        this.upstream = new InetSocketAddress(Objects.requireNonNull(upstreamHost, "upstreamHost"), upstreamPort);
        try {
            selector = Selector.open();
            listener = ServerSocketChannel.open();
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            listener.configureBlocking(false);
            listener.register(selector, SelectionKey.OP_ACCEPT);
            InetSocketAddress local = (InetSocketAddress) listener.getLocalAddress();
            host = local.getAddress().getHostAddress();
            port = local.getPort();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a TCP proxy to " + upstream, e);
        }
        loop = new Thread(this::run, "tcp-proxy-" + port());
        loop.setDaemon(true);
        loop.start();
        LOG.info("TCP proxy 127.0.0.1:{} -> {}", port(), upstream);
    }

    /** @return a started proxy in front of {@code server} */
    public static TcpProxy to(RedisServer server) {
        return new TcpProxy(server.host(), server.port());
    }

    /** @return a started proxy in front of {@code host:port} */
    public static TcpProxy to(String host, int port) {
        return new TcpProxy(host, port);
    }

    /** @return the host clients connect to: 127.0.0.1 */
    public String host() {
        return host;
    }

    /** @return the port clients connect to */
    public int port() {
        return port;
    }

    /**
     * @return a new, started connection factory on the proxy, built like
     *         {@link RedisServer#connectionFactory(Duration)} (standalone, connect timeout 1 s);
     *         destroyed when the proxy closes
     */
    public LettuceConnectionFactory connectionFactory(Duration commandTimeout) {
        Objects.requireNonNull(commandTimeout, "commandTimeout");
        return factories.standalone(host(), port(), commandTimeout, null, null);
    }

    /**
     * Stops forwarding in both directions, holding what either side sends, with every connection
     * left open. Returns once no byte crosses the proxy any more. Idempotent.
     */
    public void partition() {
        onLoop(() -> {
            partitioned = true;
            links.forEach(Link::updateInterest);
        });
    }

    /**
     * Resumes forwarding on the connections left open, delivering what was held in order (see the
     * class comment). Idempotent.
     */
    public void heal() {
        onLoop(() -> {
            partitioned = false;
            links.forEach(Link::updateInterest);
        });
    }

    /**
     * From now on, holds every byte the server sends for {@code delay} before passing it to the
     * client ({@link Duration#ZERO}: no more delay; bytes held already still wait out their time,
     * so order is kept). Requests are not delayed. Returns once in force.
     */
    public void delayReplies(Duration delay) {
        long nanos = Objects.requireNonNull(delay, "delay").toNanos();
        onLoop(() -> replyDelayNanos = nanos);
    }

    /** Closes every connection open through the proxy (both sides); new ones may be made. */
    public void resetConnections() {
        onLoop(() -> List.copyOf(links).forEach(Link::close));
    }

    /** @return whether a partition is in force */
    public boolean isPartitioned() {
        return partitioned;
    }

    /** @return connections open through the proxy now */
    public int openConnections() {
        return open.get();
    }

    /** @return connections accepted since the proxy started */
    public int acceptedConnections() {
        return accepted.get();
    }

    /** @return bytes forwarded so far, both directions together */
    public long bytesForwarded() {
        return forwarded.get();
    }

    /** Destroys the factories handed out, closes every connection and the port, stops the thread. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        try {
            factories.destroyAll();
        } finally {
            closed = true;
            selector.wakeup();
            try {
                loop.join(CONTROL_TIMEOUT.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (loop.isAlive()) {
                LOG.warn("TCP proxy thread {} did not stop", loop.getName());
            }
        }
    }

    @Override
    public String toString() {
        return "TcpProxy[127.0.0.1:" + port() + " -> " + upstream + (partitioned ? ", partitioned" : "") + "]";
    }

    /** Runs {@code task} on the loop thread and waits for it. */
    private void onLoop(Runnable task) {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
        if (Thread.currentThread() == loop) {
            task.run();
            return;
        }
        CompletableFuture<Void> done = new CompletableFuture<>();
        tasks.add(() -> {
            try {
                task.run();
                done.complete(null);
            } catch (RuntimeException e) {
                done.completeExceptionally(e);
            }
        });
        selector.wakeup();
        try {
            done.get(CONTROL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while controlling " + this, e);
        } catch (ExecutionException e) {
            throw new IllegalStateException("could not control " + this, e.getCause());
        } catch (TimeoutException e) {
            throw new IllegalStateException(this + " did not act within " + CONTROL_TIMEOUT.toSeconds() + " s", e);
        }
    }

    private void run() {
        try {
            while (!closed) {
                long due = nextDue();
                if (due == Long.MAX_VALUE) {
                    selector.select();
                } else {
                    long waitMillis = TimeUnit.NANOSECONDS.toMillis(due - System.nanoTime()) + 1;
                    if (waitMillis <= 0) {
                        selector.selectNow();
                    } else {
                        selector.select(waitMillis);
                    }
                }
                for (Runnable task = tasks.poll(); task != null; task = tasks.poll()) {
                    task.run();
                }
                if (!partitioned) {
                    for (Link link : List.copyOf(links)) {
                        link.server.releaseDue();
                    }
                }
                Iterator<SelectionKey> selected = selector.selectedKeys().iterator();
                while (selected.hasNext()) {
                    SelectionKey key = selected.next();
                    selected.remove();
                    if (!key.isValid()) {
                        continue;
                    }
                    if (key.channel() == listener) {
                        accept();
                    } else {
                        ((Side) key.attachment()).ready(key);
                    }
                }
            }
        } catch (IOException | ClosedSelectorException e) {
            if (!closed) {
                LOG.warn("TCP proxy {} stopped", this, e);
            }
        } finally {
            List.copyOf(links).forEach(Link::close);
            closeQuietly(listener);
            try {
                selector.close();
            } catch (IOException e) {
                // closing anyway
            }
            // Callers of partition()/heal() racing close() must not wait for nothing.
            for (Runnable task = tasks.poll(); task != null; task = tasks.poll()) {
                task.run();
            }
        }
    }

    private void accept() throws IOException {
        SocketChannel client = listener.accept();
        if (client == null) {
            return;
        }
        accepted.incrementAndGet();
        SocketChannel server = SocketChannel.open();
        try {
            // Blocking, but local: the server listens (accepted at once, even while paused) or
            // refuses at once (stopped).
            server.socket().connect(upstream, (int) CONNECT_TIMEOUT.toMillis());
        } catch (IOException e) {
            // Nothing to forward to: the client sees its connection closed, as the server's own
            // closed port would have refused it.
            closeQuietly(server);
            closeQuietly(client);
            return;
        }
        for (SocketChannel channel : List.of(client, server)) {
            channel.configureBlocking(false);
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        }
        Link link = new Link(client, server);
        links.add(link);
        open.incrementAndGet();
        link.updateInterest();
    }

    /** @return System.nanoTime() at which the first held chunk is due, or Long.MAX_VALUE if none is held */
    private long nextDue() {
        long due = Long.MAX_VALUE;
        if (partitioned) {
            return due;
        }
        for (Link link : links) {
            Chunk first = link.server.held.peek();
            if (first != null && first.dueNanos < due) {
                due = first.dueNanos;
            }
        }
        return due;
    }

    /** Bytes the server sent, held until {@code dueNanos}. */
    private static final class Chunk {

        final long dueNanos;
        final ByteBuffer bytes;

        Chunk(long dueNanos, ByteBuffer bytes) {
            this.dueNanos = dueNanos;
            this.bytes = bytes;
        }
    }

    private static void closeQuietly(java.nio.channels.Channel channel) {
        try {
            channel.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    /** One proxied connection: the client's socket, the server's, and a buffer per direction. */
    private final class Link {

        private final Side client;
        private final Side server;
        private boolean closed;

        Link(SocketChannel clientChannel, SocketChannel serverChannel) throws IOException {
            this.client = new Side(this, clientChannel, false);
            this.server = new Side(this, serverChannel, true);
            client.peer = server;
            server.peer = client;
            client.register();
            server.register();
        }

        void updateInterest() {
            if (!closed) {
                client.updateInterest();
                server.updateInterest();
            }
        }

        void close() {
            if (closed) {
                return;
            }
            closed = true;
            links.remove(this);
            open.decrementAndGet();
            closeQuietly(client.channel);
            closeQuietly(server.channel);
        }
    }

    /**
     * One socket of a link, with the buffer of bytes read from it and not yet written to its peer
     * (kept in "fill" mode: position = bytes held).
     */
    private final class Side {

        private final Link link;
        private final SocketChannel channel;
        private final ByteBuffer inbound = ByteBuffer.allocate(BUFFER_SIZE);
        /** The server's side only: bytes read from it that wait out the reply delay, in order. */
        private final ArrayDeque<Chunk> held = new ArrayDeque<>();
        private final boolean fromServer;
        private Side peer;
        private SelectionKey key;

        Side(Link link, SocketChannel channel, boolean fromServer) {
            this.link = link;
            this.channel = channel;
            this.fromServer = fromServer;
        }

        /** Bytes just read into {@link #inbound}: held for the reply delay if one is set (or bytes are held). */
        private void hold() {
            if (!fromServer || (replyDelayNanos == 0 && held.isEmpty()) || inbound.position() == 0) {
                return;
            }
            inbound.flip();
            ByteBuffer copy = ByteBuffer.allocate(inbound.remaining());
            copy.put(inbound).flip();
            inbound.clear();
            held.add(new Chunk(System.nanoTime() + replyDelayNanos, copy));
        }

        /** Moves the held bytes that are due into {@link #inbound}, as far as it takes them, and sends them on. */
        void releaseDue() {
            if (held.isEmpty() || link.closed) {
                return;
            }
            long now = System.nanoTime();
            while (!held.isEmpty() && held.peek().dueNanos - now <= 0 && inbound.hasRemaining()) {
                Chunk first = held.peek();
                int n = Math.min(first.bytes.remaining(), inbound.remaining());
                ByteBuffer part = first.bytes.duplicate();
                part.limit(part.position() + n);
                inbound.put(part);
                first.bytes.position(first.bytes.position() + n);
                if (!first.bytes.hasRemaining()) {
                    held.poll();
                }
            }
            try {
                peer.flushFrom(this);
                link.updateInterest();
            } catch (IOException e) {
                link.close();
            }
        }

        void register() throws IOException {
            key = channel.register(selector, 0, this);
        }

        void ready(SelectionKey selected) {
            if (partitioned || link.closed) {
                return;
            }
            try {
                if (selected.isValid() && selected.isReadable()) {
                    int read = channel.read(inbound);
                    if (read < 0) {
                        // The other side gets what was already read, then the link goes.
                        peer.flushFrom(this);
                        link.close();
                        return;
                    }
                    hold();
                    peer.flushFrom(this);
                }
                if (selected.isValid() && selected.isWritable()) {
                    flushFrom(peer);
                }
                link.updateInterest();
            } catch (IOException e) {
                link.close();
            }
        }

        /** Writes what {@code source} holds to this side, as much as the socket takes now. */
        void flushFrom(Side source) throws IOException {
            if (source.inbound.position() == 0) {
                return;
            }
            source.inbound.flip();
            try {
                forwarded.addAndGet(channel.write(source.inbound));
            } finally {
                source.inbound.compact();
            }
        }

        void updateInterest() {
            if (!key.isValid()) {
                return;
            }
            int ops = 0;
            if (!partitioned) {
                if (inbound.hasRemaining()) {
                    ops |= SelectionKey.OP_READ;
                }
                if (peer.inbound.position() > 0) {
                    ops |= SelectionKey.OP_WRITE;
                }
            }
            key.interestOps(ops);
        }
    }
}
