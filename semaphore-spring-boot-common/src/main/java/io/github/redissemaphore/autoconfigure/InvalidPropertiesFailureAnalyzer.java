package io.github.redissemaphore.autoconfigure;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Collectors;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.BindException;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.bind.UnboundConfigurationPropertiesException;
import org.springframework.boot.context.properties.bind.validation.BindValidationException;
import org.springframework.boot.context.properties.bind.validation.ValidationErrors;
import org.springframework.boot.context.properties.source.ConfigurationProperty;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.origin.Origin;
import org.springframework.core.Ordered;
import org.springframework.core.env.Environment;
import org.springframework.validation.FieldError;
import org.springframework.validation.ObjectError;

/**
 * Turns a property under {@code distributed-semaphore} that cannot be bound, breaks a rule or is
 * not one the starter knows (a typo, see {@link UnknownProperty}) into a start-up failure report a
 * person can act on: each property named in the dashed form it is written in
 * ({@code semaphores.reports.lease-time}, not {@code semaphores[reports].leaseTime}), its value as
 * written ({@code -5s}, not {@code PT-5S}) and where it comes from, why it is wrong, what it may be,
 * and what to change. Boot's own analyzers report the same failures in the terms
 * of the Java classes; this one runs before them ({@link #getOrder()}) and leaves every other
 * failure to them.
 */
final class InvalidPropertiesFailureAnalyzer extends AbstractFailureAnalyzer<BindException> implements Ordered {

    private static final String NL = System.lineSeparator();

    private final @Nullable Environment environment;

    /** @param environment where a value the binder did not keep is looked up; null when there is no context */
    InvalidPropertiesFailureAnalyzer(@Nullable Environment environment) {
        this.environment = environment;
    }

    @Override
    protected @Nullable FailureAnalysis analyze(Throwable rootFailure, BindException cause) {
        BindValidationException validation = findCause(cause, BindValidationException.class);
        UnboundConfigurationPropertiesException unknown =
                findCause(cause, UnboundConfigurationPropertiesException.class);
        List<Problem> problems = validation != null ? problems(validation.getValidationErrors())
                : unknown != null ? problems(unknown.getUnboundProperties()) : problems(cause);
        if (problems.isEmpty()) {
            return null;
        }
        StringBuilder description = new StringBuilder("Invalid distributed semaphore configuration:").append(NL);
        problems.forEach(problem -> description.append(NL).append(problem.describe()));
        String action = problems.stream().map(Problem::action).distinct().collect(Collectors.joining(NL));
        return new FailureAnalysis(description.toString(), action, cause);
    }

    /** Before Boot's analyzers, which have no order and would report the same failure in Java terms. */
    @Override
    public int getOrder() {
        return Ordered.HIGHEST_PRECEDENCE;
    }

    /** A value that is not of its property's type, e.g. {@code permits: lots}. */
    private List<Problem> problems(BindException failure) {
        SettingDescription setting = SettingDescription.of(failure.getName());
        if (setting == null) {
            return List.of();
        }
        ConfigurationProperty property = failure.getProperty() != null ? failure.getProperty() : lookUp(failure.getName());
        String written = property != null ? String.valueOf(property.getValue()) : null;
        String reason = setting.isGroup() ? "holds settings, not a value"
                : written != null ? "'" + written + "' is not " + setting.kind() : "is not " + setting.kind();
        return List.of(Problem.ofValue(setting, quote(written), origin(property), reason, setting.allowed()));
    }

    /** Values that break a rule, e.g. {@code lease-time: -5s}; all of one group of settings at once. */
    private List<Problem> problems(ValidationErrors errors) {
        List<Problem> problems = new ArrayList<>();
        for (ObjectError error : errors) {
            ConfigurationPropertyName name = ConfigurationPropertyName.of(error.getObjectName());
            if (error instanceof FieldError field) {
                name = name.append(DataObjectPropertyName.toDashedForm(field.getField()));
            }
            SettingDescription setting = SettingDescription.of(name);
            if (setting == null) {
                return List.of();
            }
            problems.add(problem(setting, name, error, errors.getBoundProperties()));
        }
        return problems;
    }

    /** Properties the starter has no place for, e.g. {@code semaphores.pricing.permit}: typos, all at once. */
    private static List<Problem> problems(Set<ConfigurationProperty> unknown) {
        List<Problem> problems = new ArrayList<>();
        for (ConfigurationProperty property : unknown) {
            UnknownProperty described = UnknownProperty.of(property.getName());
            if (described == null) {
                return List.of();
            }
            problems.add(new Problem(described.property(), quote(String.valueOf(property.getValue())),
                    property.getOrigin(), described.reason(), described.allowed(), described.action()));
        }
        return problems;
    }

    private Problem problem(SettingDescription setting, ConfigurationPropertyName name, ObjectError error,
                            Set<ConfigurationProperty> bound) {
        String reason = error.getDefaultMessage();
        if (setting.isSemaphoreName()) {
            // the name itself is wrong; its settings say where it was written
            Origin origin = bound.stream().filter(property -> name.isAncestorOf(property.getName()))
                    .map(ConfigurationProperty::getOrigin).findFirst().orElse(null);
            return Problem.ofName(setting, origin, reason);
        }
        ConfigurationProperty property = bound.stream().filter(candidate -> candidate.getName().equals(name))
                .findFirst().orElseGet(() -> lookUp(name));
        String value = property != null ? quote(String.valueOf(property.getValue())) : notWritten(setting, error);
        String allowed = setting.allowed();
        if (!setting.isConstrainedBy(error.getCode())) {
            // a rule between properties (waiter-heartbeat and waiter-tick): the range alone is not enough
            allowed += ", and " + Objects.requireNonNull(reason, "reason").replaceFirst("^must be ", "");
        }
        return Problem.ofValue(setting, value, origin(property), reason, allowed);
    }

    /** A rule between properties can fail on one the user left out: show the value it had. */
    private static @Nullable String notWritten(SettingDescription setting, ObjectError error) {
        if (setting.defaultValue() != null) {
            return quote(setting.defaultValue()) + " (not set: the default)";
        }
        Object rejected = error instanceof FieldError field ? field.getRejectedValue() : null;
        return rejected instanceof Duration duration ? quote(SettingDescription.format(duration))
                : rejected == null ? null : quote(rejected.toString());
    }

    private static @Nullable String quote(@Nullable String value) {
        return value == null ? null : "\"" + value + "\"";
    }

    private @Nullable ConfigurationProperty lookUp(ConfigurationPropertyName name) {
        return ConfiguredProperties.lookUp(environment, name);
    }

    private static @Nullable Origin origin(@Nullable ConfigurationProperty property) {
        return property != null ? property.getOrigin() : null;
    }

    /**
     * One wrong property: the lines of the description and the line of the action it gets.
     *
     * @param value as written, quoted, with a note if it was not written; null if unknown
     */
    private record Problem(String property, @Nullable String value, @Nullable Origin origin, @Nullable String reason,
                           String allowed, String action) {

        static Problem ofValue(SettingDescription setting, @Nullable String value, @Nullable Origin origin,
                               @Nullable String reason, String allowed) {
            String removed = setting.whenRemoved();
            String action = setting.isGroup()
                    ? "Write each setting as a property of its own: " + setting.group() + "."
                    : "Set " + setting.property() + " to " + allowed
                            + (removed != null ? ", or remove it " + removed : "") + ".";
            return new Problem(setting.property(), value, origin, reason, allowed, action);
        }

        static Problem ofName(SettingDescription setting, @Nullable Origin origin, @Nullable String reason) {
            return new Problem(setting.property(), quote(setting.semaphoreName()), origin, reason, setting.nameRule(),
                    "Rename the semaphore \"" + setting.semaphoreName() + "\": a semaphore name is "
                            + setting.nameRule() + ".");
        }

        String describe() {
            StringBuilder lines = new StringBuilder();
            lines.append("    Property: ").append(property).append(NL);
            if (value != null) {
                lines.append("    Value: ").append(value).append(NL);
            }
            if (origin != null) {
                lines.append("    Origin: ").append(origin).append(NL);
            }
            lines.append("    Reason: ").append(reason).append(NL);
            lines.append("    Allowed: ").append(allowed).append(NL);
            return lines.toString();
        }
    }
}
