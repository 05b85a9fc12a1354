package io.github.redissemaphore.core;

import java.util.List;

/**
 * Settings ask for grants acknowledged by replicas ({@link SemaphoreSettings#replicas()} above 0),
 * but the Redis server refuses {@code WAIT}, with which the library waits for them: the server
 * has no such command (ElastiCache Serverless, Redis Cloud's Essentials plans), or the ACL of the
 * Redis user does not allow it. Thrown when the registry starts if it can reach Redis then (so a
 * Spring Boot application does not start), else by the first acquisition of such a semaphore;
 * never for a semaphore that does not wait for replicas. Set {@code replicas} to 0 on such a
 * server, or, for an ACL refusal, give the user {@code +set +wait}.
 */
public class ReplicasUnsupportedException extends SemaphoreException {

    private static final long serialVersionUID = 1L;

    private final List<String> semaphores;
    private final boolean defaults;
    private final boolean refusedByAcl;
    private final String serverReply;

    /**
     * @param message      what was refused and what to change, in the terms of the caller
     * @param semaphores   the semaphores, by name, whose settings wait for replicas
     * @param defaults     whether the registry's default settings wait for replicas
     * @param refusedByAcl true when the ACL of the Redis user refused {@code WAIT} (a rule can grant
     *                     it), false when the server has no such command
     * @param serverReply  the server's error reply
     */
    public ReplicasUnsupportedException(String message, List<String> semaphores, boolean defaults,
                                        boolean refusedByAcl, String serverReply) {
        super(message);
        this.semaphores = List.copyOf(semaphores);
        this.defaults = defaults;
        this.refusedByAcl = refusedByAcl;
        this.serverReply = serverReply;
    }

    /** @return the semaphores, by name, whose settings wait for replicas; may be empty when only the defaults do */
    public List<String> semaphores() {
        return semaphores;
    }

    /** @return whether the registry's default settings wait for replicas */
    public boolean defaults() {
        return defaults;
    }

    /** @return true when the ACL of the Redis user refused {@code WAIT}, false when the server has no such command */
    public boolean refusedByAcl() {
        return refusedByAcl;
    }

    /** @return the server's error reply to {@code WAIT} */
    public String serverReply() {
        return serverReply;
    }
}
