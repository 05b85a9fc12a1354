package io.github.redissemaphore.core.internal;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.security.SecureRandom;
import java.util.HexFormat;

/** Unguessable ids and the owner label recorded with each lease. */
final class Ids {

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final String HOST_AND_PID = hostName() + "/" + ProcessHandle.current().pid();

    private Ids() {
    }

    /** @return 128 random bits in hex: a permit or waiter id nobody can guess */
    static String permitId() {
        return random(16);
    }

    /** @return 64 random bits in hex: this JVM's inbox */
    static String clientId() {
        return random(8);
    }

    /** @return host/pid/thread of the caller, for introspection */
    static String owner() {
        return HOST_AND_PID + "/" + Thread.currentThread().getName();
    }

    private static String random(int bytes) {
        byte[] value = new byte[bytes];
        RANDOM.nextBytes(value);
        return HexFormat.of().formatHex(value);
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return ManagementFactory.getRuntimeMXBean().getName();
        }
    }
}
