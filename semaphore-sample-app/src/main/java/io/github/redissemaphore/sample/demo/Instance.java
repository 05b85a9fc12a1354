package io.github.redissemaphore.sample.demo;

import java.net.URI;
import java.util.Objects;

import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * One running instance of the service in the demo's fleet.
 *
 * @param name    A, B, ...
 * @param context its application context
 */
record Instance(String name, ConfigurableApplicationContext context) {

    /** @return {@code http://localhost:<port>} of its web server */
    URI baseUri() {
        int port = Objects.requireNonNull(((WebServerApplicationContext) context).getWebServer(), "web server")
                .getPort();
        return URI.create("http://localhost:" + port);
    }

    /** @return its bean of {@code type} */
    <T> T bean(Class<T> type) {
        return context.getBean(type);
    }
}
