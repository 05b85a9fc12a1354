package io.github.redissemaphore.autoconfigure;

import io.github.redissemaphore.core.ReplicasUnsupportedException;

import java.util.LinkedHashMap;
import java.util.Map;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.core.env.Environment;

/**
 * Turns {@link ReplicasUnsupportedException} (settings wait for replicas, but the Redis server
 * refuses {@code WAIT}) into a start-up failure report that names each property that asks for
 * replicas as the user wrote it ({@code semaphores.reports.replicas}, or
 * {@code defaults.replicas} for the semaphores that take the defaults), its value and origin,
 * why the server refuses {@code WAIT} (it has no such command, or the ACL of the Redis user does
 * not allow it), and what to change.
 */
final class ReplicasUnsupportedFailureAnalyzer extends AbstractFailureAnalyzer<ReplicasUnsupportedException> {

    private static final String NL = System.lineSeparator();
    private static final ConfigurationPropertyName DEFAULTS =
            ConfigurationPropertyName.of(DistributedSemaphoreProperties.PREFIX + ".defaults.replicas");

    private final @Nullable Environment environment;

    /** @param environment where the properties are looked up; null when there is no context */
    ReplicasUnsupportedFailureAnalyzer(@Nullable Environment environment) {
        this.environment = environment;
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, ReplicasUnsupportedException cause) {
        Map<String, @Nullable ConfigurationProperty> properties = new LinkedHashMap<>();
        for (String semaphore : cause.semaphores()) {
            ConfigurationPropertyName own = ConfigurationPropertyName.of(DistributedSemaphoreProperties.PREFIX
                    + ".semaphores").append("[" + semaphore + "]").append("replicas");
            ConfigurationProperty written = lookUp(own);
            ConfigurationPropertyName named = written != null ? own : DEFAULTS;
            properties.put(dashed(named), written != null ? written : lookUp(DEFAULTS));
        }
        if (cause.defaults()) {
            properties.put(dashed(DEFAULTS), lookUp(DEFAULTS));
        }
        StringBuilder description = new StringBuilder("Grants of these semaphores wait for replicas to acknowledge")
                .append(" them (Redis WAIT), but ")
                .append(cause.refusedByAcl() ? "the ACL of the Redis user does not allow WAIT"
                        : "this Redis server has no WAIT command")
                .append(":").append(NL).append(NL);
        properties.forEach((property, written) -> {
            description.append("    Property: ").append(property).append(NL);
            if (written != null) {
                description.append("    Value: \"").append(written.getValue()).append("\"").append(NL);
                if (written.getOrigin() != null) {
                    description.append("    Origin: ").append(written.getOrigin()).append(NL);
                }
            }
            description.append(NL);
        });
        description.append("    Redis: ").append(cause.serverReply().strip()).append(NL);
        String settings = String.join(" and ", properties.keySet());
        String action = cause.refusedByAcl()
                ? "Set " + settings + " to 0, or give the Redis user +set +wait (the ACL rule of docs/operating.md)."
                : "Set " + settings + " to 0: this Redis server cannot wait for replicas (managed offerings without"
                        + " WAIT, such as ElastiCache Serverless and Redis Cloud's Essentials plans:"
                        + " docs/compatibility.md).";
        return new FailureAnalysis(description.toString(), action, cause);
    }

    /** @return the property in the dashed form the documentation uses, brackets kept where the name needs them */
    private static String dashed(ConfigurationPropertyName name) {
        SettingDescription setting = SettingDescription.of(name);
        return setting != null ? setting.property() : name.toString();
    }

    private @Nullable ConfigurationProperty lookUp(ConfigurationPropertyName name) {
        return ConfiguredProperties.lookUp(environment, name);
    }
}
