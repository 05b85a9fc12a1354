package io.github.redissemaphore.autoconfigure.dropin;

import java.util.regex.Pattern;

/** Names a property of one semaphore as a user writes it, for the start-up reports of the drop-ins. */
public final class SemaphoreProperty {

    /** What a map key may be without brackets: Boot's canonical form of a property name's element. */
    private static final Pattern PLAIN_ELEMENT = Pattern.compile("[a-z0-9-]+");

    private SemaphoreProperty() {
    }

    /**
     * @return e.g. {@code distributed-semaphore.semaphores.reports.permits}, or
     *         {@code distributed-semaphore.semaphores[com.acme.Reports.generate].permits} for a name
     *         that needs brackets
     */
    public static String of(String semaphore, String setting) {
        String element = PLAIN_ELEMENT.matcher(semaphore).matches() ? "." + semaphore : "[" + semaphore + "]";
        return "distributed-semaphore.semaphores" + element + "." + setting;
    }
}
