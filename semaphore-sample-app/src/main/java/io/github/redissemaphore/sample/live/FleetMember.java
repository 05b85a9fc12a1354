package io.github.redissemaphore.sample.live;

import java.util.List;
import java.util.Optional;

/**
 * One running instance of the sample, as it announces itself to the rest of the fleet.
 *
 * @param name           the instance's {@code sample.instance-name}
 * @param url            where its web server answers, e.g. {@code http://localhost:8080}
 * @param host           the host name the library writes into lease owners
 * @param pid            its process id
 * @param port           its web server's port
 * @param requestThreads what the names of its web server's request threads start with, e.g.
 *                       {@code http-nio-8080-exec-}; empty when unknown
 */
public record FleetMember(String name, String url, String host, long pid, int port, String requestThreads) {

    private static final String SEPARATOR = "\t";
    private static final int FIELDS = 6;

    /** @return this member as one Redis set member (no field holds a tab) */
    String encode() {
        return String.join(SEPARATOR, name, url, host, String.valueOf(pid), String.valueOf(port), requestThreads);
    }

    /** @return the member that {@link #encode()} wrote, or empty for anything else */
    static Optional<FleetMember> decode(String encoded) {
        String[] fields = encoded.split(SEPARATOR, -1);
        if (fields.length != FIELDS) {
            return Optional.empty();
        }
        try {
            return Optional.of(new FleetMember(fields[0], fields[1], fields[2], Long.parseLong(fields[3]),
                    Integer.parseInt(fields[4]), fields[5]));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    /**
     * Tells which member a lease or a waiter belongs to. The library records its owner as
     * {@code host/pid/thread}. Instances in separate processes differ by host and pid; instances in
     * one JVM (the demo's two) share those, but each has its own pool of request threads, whose
     * names start with its own prefix (Tomcat's {@code http-nio-auto-1-exec-} and
     * {@code http-nio-auto-2-exec-} for two servers on random ports).
     *
     * @return the name of the member whose process and request threads the owner names, or empty
     *         when none does (another application on the same Redis, a thread of no request pool)
     */
    static Optional<String> nameOf(String owner, List<FleetMember> members) {
        List<FleetMember> sameProcess = members.stream()
                .filter(member -> owner.startsWith(member.processPrefix()))
                .toList();
        if (sameProcess.size() == 1) {
            return Optional.of(sameProcess.get(0).name());
        }
        return sameProcess.stream()
                .filter(member -> member.runsOnRequestThread(owner.substring(member.processPrefix().length())))
                .map(FleetMember::name)
                .findFirst();
    }

    private String processPrefix() {
        return host + "/" + pid + "/";
    }

    /** A pool names its threads prefix + number, so a longer prefix of another pool never matches. */
    private boolean runsOnRequestThread(String thread) {
        return !requestThreads.isEmpty() && thread.startsWith(requestThreads)
                && thread.length() > requestThreads.length()
                && thread.substring(requestThreads.length()).chars().allMatch(Character::isDigit);
    }
}
