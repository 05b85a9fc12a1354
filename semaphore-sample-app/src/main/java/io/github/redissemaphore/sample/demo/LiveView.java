package io.github.redissemaphore.sample.demo;

import io.github.redissemaphore.sample.live.ForceReleaseAccess;

import java.io.PrintStream;
import java.util.concurrent.CountDownLatch;

import org.springframework.context.ApplicationEvent;
import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextClosedEvent;

/**
 * The end of {@code ./demo.sh --keep-running}: prints where each instance's live view is and
 * waits until the instances stop, which Ctrl-C does (each context closes from its shutdown hook).
 */
final class LiveView {

    private LiveView() {
    }

    /** Blocks until every instance of {@code fleet} has closed. */
    static void showUntilStopped(Fleet fleet, PrintStream out) {
        CountDownLatch closed = new CountDownLatch(fleet.instances().size());
        out.println();
        out.println("The instances keep running. Their live view (open either; both show the whole fleet):");
        for (Instance instance : fleet.instances()) {
            out.printf("  instance %s: %s/%n", instance.name(), instance.baseUri());
            instance.context().addApplicationListener((ApplicationListener<ApplicationEvent>) event -> {
                if (event instanceof ContextClosedEvent) {
                    closed.countDown();
                }
            });
        }
        if (fleet.first().bean(ForceReleaseAccess.class).endpointPath().isEmpty()) {
            out.println("For a Release button on each holder, run with --management.endpoint.semaphores.access=unrestricted");
        }
        out.println("Press Ctrl-C to stop both instances.");
        try {
            closed.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
