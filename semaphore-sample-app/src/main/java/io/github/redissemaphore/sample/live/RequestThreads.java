package io.github.redissemaphore.sample.live;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import org.springframework.boot.tomcat.TomcatWebServer;
import org.springframework.boot.web.server.WebServer;

/**
 * Finds what the names of a web server's request threads start with, by running a no-op on its
 * request-thread pool and reading that thread's name. The library records the thread of each
 * holder and waiter, and a request's semaphore is taken on its request thread, so this prefix is
 * what tells two instances of one JVM apart. Tomcat only (the sample's server); others give "".
 */
final class RequestThreads {

    /** Ample for an idle pool, even on a starved machine; until then the instance is not announced. */
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private RequestThreads() {
    }

    /** @return e.g. {@code http-nio-auto-1-exec-}: the name of one of its threads, without the trailing number */
    static CompletableFuture<String> prefixOf(WebServer server) {
        if (!(server instanceof TomcatWebServer tomcat)) {
            return CompletableFuture.completedFuture("");
        }
        Executor requestThreads = tomcat.getTomcat().getConnector().getProtocolHandler().getExecutor();
        return CompletableFuture.supplyAsync(() -> Thread.currentThread().getName(), requestThreads)
                .orTimeout(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                .thenApply(name -> name.replaceFirst("\\d+$", ""))
                .exceptionally(e -> "");
    }
}
