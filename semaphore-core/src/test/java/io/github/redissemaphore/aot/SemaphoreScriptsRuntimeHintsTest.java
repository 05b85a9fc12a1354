package io.github.redissemaphore.aot;

import static org.assertj.core.api.Assertions.assertThat;

import io.github.redissemaphore.core.internal.redis.Scripts;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.aot.AotServices;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;

/** The scripts are kept in a native image, through the registration Spring's AOT processing reads. */
class SemaphoreScriptsRuntimeHintsTest {

    @Test
    void everyScriptOnTheClassPathIsAResourceHintOfTheRegisteredRegistrar() throws IOException {
        RuntimeHints hints = new RuntimeHints();
        // as Spring's AOT processing finds it: through META-INF/spring/aot.factories
        AotServices<RuntimeHintsRegistrar> registrars = AotServices.factories(getClass().getClassLoader())
                .load(RuntimeHintsRegistrar.class);
        assertThat(registrars.asList()).hasAtLeastOneElementOfType(SemaphoreScriptsRuntimeHints.class);
        registrars.forEach(registrar -> registrar.registerHints(hints, getClass().getClassLoader()));

        List<String> scripts = scriptsOnTheClassPath();
        assertThat(scripts).as("the scripts Scripts.load() reads")
                .contains("_args.lua", "_grant.lua", "acquire.lua", "release.lua", "renew.lua", "cancel.lua", "state.lua");
        for (String script : scripts) {
            assertThat(RuntimeHintsPredicates.resource().forResource(Scripts.LOCATION + script))
                    .as(script).accepts(hints);
        }
        assertThat(RuntimeHintsPredicates.resource().forResource(Scripts.LOCATION + "notes.txt"))
                .as("only the scripts").rejects(hints);
    }

    private static List<String> scriptsOnTheClassPath() throws IOException {
        Resource[] found = new PathMatchingResourcePatternResolver()
                .getResources("classpath*:" + Scripts.LOCATION + "*.lua");
        return Arrays.stream(found).map(Resource::getFilename).distinct().toList();
    }
}
