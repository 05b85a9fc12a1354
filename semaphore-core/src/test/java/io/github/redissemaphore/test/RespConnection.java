package io.github.redissemaphore.test;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A minimal RESP2 client on a plain socket, for the admin side of the test support.
 *
 * <p>Why not Lettuce: a Lettuce connection sends {@code HELLO} and {@code CLIENT SETINFO} on connect
 * and brings its own threads. Admin calls (FLUSHALL before each test, INFO commandstats, the PING of
 * a start-up poll) must be cheap and must leave nothing in the command statistics but the admin
 * command itself, so a test counting its own commands is not surprised.
 *
 * <p>Replies: simple string and bulk string as {@link String}, integer as {@link Long}, array as
 * {@code List<Object>}, nil as {@code null}; an error reply throws {@link RedisErrorReply}.
 */
final class RespConnection implements AutoCloseable {

    /** An error reply of the server ({@code -ERR ...}, {@code -MOVED ...}). */
    static final class RedisErrorReply extends RuntimeException {

        private static final long serialVersionUID = 1L;

        RedisErrorReply(String message) {
            super(message);
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    private RespConnection(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new BufferedInputStream(socket.getInputStream());
        this.out = new BufferedOutputStream(socket.getOutputStream());
    }

    /**
     * Connects; {@code timeout} bounds the connect and every read.
     *
     * @throws IOException when nothing answers on that port
     */
    static RespConnection open(String host, int port, Duration timeout) throws IOException {
        Socket socket = new Socket();
        try {
            socket.connect(new InetSocketAddress(host, port), (int) timeout.toMillis());
            socket.setSoTimeout((int) timeout.toMillis());
            socket.setTcpNoDelay(true);
            return new RespConnection(socket);
        } catch (IOException e) {
            socket.close();
            throw e;
        }
    }

    /** One command on a connection of its own, closed afterwards; I/O failures become unchecked. */
    static Object call(String host, int port, Duration timeout, String... command) {
        try (RespConnection connection = open(host, port, timeout)) {
            return connection.call(command);
        } catch (IOException e) {
            throw new UncheckedIOException("Redis " + host + ":" + port + " did not answer " + command[0], e);
        }
    }

    /** Sends a command and reads its reply. */
    Object call(String... command) throws IOException {
        send(command);
        return read();
    }

    /** Sends a command without reading the reply (for SHUTDOWN, which answers by closing). */
    void send(String... command) throws IOException {
        out.write(("*" + command.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
        for (String argument : command) {
            byte[] bytes = argument.getBytes(StandardCharsets.UTF_8);
            out.write(("$" + bytes.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(bytes);
            out.write('\r');
            out.write('\n');
        }
        out.flush();
    }

    /** Reads one reply. */
    Object read() throws IOException {
        int type = in.read();
        if (type < 0) {
            throw new EOFException("connection closed by the server");
        }
        String line = readLine();
        switch (type) {
            case '+':
                return line;
            case '-':
                throw new RedisErrorReply(line);
            case ':':
                return Long.parseLong(line);
            case '$':
                return readBulk(Integer.parseInt(line));
            case '*':
                int count = Integer.parseInt(line);
                if (count < 0) {
                    return null;
                }
                List<Object> items = new ArrayList<>(count);
                for (int i = 0; i < count; i++) {
                    items.add(readItem());
                }
                return items;
            default:
                throw new IOException("not a RESP2 reply, type byte " + type);
        }
    }

    /** An array item may itself be an error (e.g. in EXEC replies): keep it as a value there. */
    private Object readItem() throws IOException {
        try {
            return read();
        } catch (RedisErrorReply e) {
            return e;
        }
    }

    private String readBulk(int length) throws IOException {
        if (length < 0) {
            return null;
        }
        byte[] bytes = in.readNBytes(length);
        if (bytes.length < length) {
            throw new EOFException("connection closed in the middle of a reply");
        }
        readLine();
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private String readLine() throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b = in.read(); b != '\r'; b = in.read()) {
            if (b < 0) {
                throw new EOFException("connection closed in the middle of a reply");
            }
            line.write(b);
        }
        if (in.read() != '\n') {
            throw new IOException("malformed RESP line");
        }
        return line.toString(StandardCharsets.UTF_8);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
