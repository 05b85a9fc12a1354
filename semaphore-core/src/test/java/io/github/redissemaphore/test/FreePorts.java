package io.github.redissemaphore.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;

/**
 * Free TCP ports on 127.0.0.1 for the Redis processes of the tests.
 *
 * <p>A port is found by letting the OS pick one (bind to port 0) and releasing it. Another process
 * may take it before Redis binds it; {@link RedisProcess} notices (Redis exits with "Address already
 * in use") and starts again on a new port, so the race is harmless.
 */
public final class FreePorts {

    /** Cluster nodes also listen on port + 10000 (the cluster bus), which must fit in 65535. */
    private static final int CLUSTER_BUS_OFFSET = 10000;

    private FreePorts() {
    }

    /** @return a port that was free on 127.0.0.1 a moment ago */
    public static int find() {
        try (ServerSocket socket = new ServerSocket()) {
            // No SO_REUSEADDR: a port in TIME_WAIT would be handed out and then fail to bind.
            socket.setReuseAddress(false);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("no free port on 127.0.0.1", e);
        }
    }

    /** @return a free port whose cluster bus port (port + 10000) is free too */
    public static int findWithClusterBus() {
        for (int attempt = 0; attempt < 200; attempt++) {
            int port = find();
            if (port + CLUSTER_BUS_OFFSET <= 65535 && isFree(port + CLUSTER_BUS_OFFSET)) {
                return port;
            }
        }
        throw new IllegalStateException("no free port p on 127.0.0.1 with p + 10000 free too");
    }

    /** @return whether {@code port} can be bound on 127.0.0.1 right now */
    public static boolean isFree(int port) {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(false);
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** @return whether something accepts connections on {@code host:port} */
    public static boolean isListening(String host, int port) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(host, port), 500);
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
