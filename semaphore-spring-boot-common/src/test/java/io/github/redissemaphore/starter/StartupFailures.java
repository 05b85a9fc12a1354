package io.github.redissemaphore.starter;

import io.github.redissemaphore.autoconfigure.DistributedSemaphoreAutoConfiguration;
import io.github.redissemaphore.test.RedisServer;

import java.util.stream.Stream;

import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatException;

/**
 * Starts an application as {@code SpringApplication.run} does, so Spring Boot's failure analyzers
 * report what stops it: Boot's Redis and AOP auto-configuration and the starter's, on a real Redis,
 * with the given beans.
 */
public final class StartupFailures {

    private StartupFailures() {
    }

    /** @return the failure report the application printed, from its banner line on */
    public static String failureReport(CapturedOutput output, RedisServer server, Class<?>[] beans,
                                       String... arguments) {
        assertThatException().isThrownBy(() -> run(server, beans, arguments).close());
        String printed = output.toString();
        int report = printed.lastIndexOf("APPLICATION FAILED TO START");
        assertThat(report).as("a failure report in %s", printed).isNotNegative();
        return printed.substring(report);
    }

    /** @return the running application; close it */
    public static ConfigurableApplicationContext run(RedisServer server, Class<?>[] beans, String... arguments) {
        SpringApplication application = new SpringApplication(
                Stream.concat(Stream.of(StarterApplication.class), Stream.of(beans)).toArray(Class<?>[]::new));
        application.setWebApplicationType(WebApplicationType.NONE);
        application.setBannerMode(Banner.Mode.OFF);
        return application.run(Stream.concat(Stream.of("--spring.data.redis.url=" + server.uri(),
                "--distributed-semaphore.key-prefix=" + server.keyPrefix()), Stream.of(arguments))
                .toArray(String[]::new));
    }

    @Configuration(proxyBeanMethods = false)
    @BootLine.ImportRedisAutoConfiguration
    @ImportAutoConfiguration({AopAutoConfiguration.class,
            DistributedSemaphoreAutoConfiguration.class})
    static class StarterApplication {
    }
}
