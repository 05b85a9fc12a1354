package io.github.redissemaphore.core.internal;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;

/** Unguessable ids and the owner label recorded with each lease. */
final class Ids {

    /**
     * One generator per thread: a single shared {@link SecureRandom} is a lock every acquisition
     * takes (and Linux's default NativePRNG locks globally even across instances), so each thread
     * has its own DRBG, seeded from the system's entropy.
     */
    private static final ThreadLocal<SecureRandom> RANDOM = ThreadLocal.withInitial(Ids::newRandom);
    private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();
    private static final String HOST_AND_PID = hostName() + "/" + ProcessHandle.current().pid() + "/";
    /** The owner label of each thread, built once per thread (and again if it is renamed). */
    private static final ThreadLocal<String[]> OWNER = ThreadLocal.withInitial(() -> new String[2]);

    private Ids() {
    }

    /** @return 128 random bits, 22 URL-safe characters: a permit or waiter id nobody can guess */
    static String permitId() {
        return random(16);
    }

    /**
     * @return the first 8 characters of a permit id, for logs: enough to find it in
     *         {@code state()}, too few to release or adopt it (an id is a capability)
     */
    static String shown(String id) {
        return id.length() > 8 ? id.substring(0, 8) + "..." : id;
    }

    /** @return 64 random bits: this JVM's inbox */
    static String clientId() {
        return random(8);
    }

    /** @return host/pid/thread of the caller, for introspection */
    static String owner() {
        String thread = Thread.currentThread().getName();
        String[] cached = OWNER.get();
        if (!thread.equals(cached[0])) {
            cached[0] = thread;
            cached[1] = HOST_AND_PID + thread;
        }
        return cached[1];
    }

    private static String random(int bytes) {
        byte[] value = new byte[bytes];
        RANDOM.get().nextBytes(value);
        return ENCODER.encodeToString(value);
    }

    private static SecureRandom newRandom() {
        try {
            return SecureRandom.getInstance("DRBG");
        } catch (NoSuchAlgorithmException e) {
            return new SecureRandom();
        }
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (Exception e) {
            return ManagementFactory.getRuntimeMXBean().getName();
        }
    }
}
