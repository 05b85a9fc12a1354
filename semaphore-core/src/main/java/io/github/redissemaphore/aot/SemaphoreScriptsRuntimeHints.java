package io.github.redissemaphore.aot;

import io.github.redissemaphore.core.internal.redis.Scripts;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.jspecify.annotations.Nullable;

/**
 * Keeps the Lua scripts in a GraalVM native image: {@link Scripts} reads them as
 * class-path resources when the registry starts, and a native image holds only the resources it
 * was told about. Registered in {@code META-INF/spring/aot.factories}, so Spring's AOT processing
 * applies it to every application with this jar, with or without Spring Boot.
 */
class SemaphoreScriptsRuntimeHints implements RuntimeHintsRegistrar {

    /** Every script, so one added to the folder is covered without a change here. */
    static final String PATTERN = Scripts.LOCATION + "*.lua";

    @Override
    public void registerHints(RuntimeHints hints, @Nullable ClassLoader classLoader) {
        hints.resources().registerPattern(PATTERN);
    }
}
