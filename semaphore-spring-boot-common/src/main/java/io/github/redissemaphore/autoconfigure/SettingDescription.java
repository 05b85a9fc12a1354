package io.github.redissemaphore.autoconfigure;

import java.lang.reflect.AnnotatedParameterizedType;
import java.lang.reflect.Field;
import java.lang.reflect.Parameter;
import java.lang.reflect.RecordComponent;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

import org.hibernate.validator.constraints.Range;
import org.hibernate.validator.constraints.time.DurationMax;
import org.hibernate.validator.constraints.time.DurationMin;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.springframework.core.ResolvableType;

/**
 * What one property under {@code distributed-semaphore} is, told the way a user configures it:
 * its dashed name, the values it allows, and what applies when it is left out. Everything is read
 * off {@link DistributedSemaphoreProperties} (its components, their constraints and
 * {@code @DefaultValue}s), so a property added there is described without a change here.
 */
final class SettingDescription {

    private static final ConfigurationPropertyName ROOT = ConfigurationPropertyName.of(DistributedSemaphoreProperties.PREFIX);
    private static final String DURATION_EXAMPLES = " (such as 500ms, 30s or 5m)";

    private final String property;
    /** The record the property is a component of; null for the root, as {@link #component} */
    private final @Nullable Class<?> owner;
    /** Null for the root and for a semaphore's name (an entry of a map) */
    private final @Nullable RecordComponent component;
    private final Class<?> valueType;
    private final @Nullable String semaphoreName;
    private final @Nullable SemaphoreName nameRule;

    private SettingDescription(String property, @Nullable Class<?> owner, @Nullable RecordComponent component,
                               Class<?> valueType, @Nullable String semaphoreName, @Nullable SemaphoreName nameRule) {
        this.property = property;
        this.owner = owner;
        this.component = component;
        this.valueType = valueType;
        this.semaphoreName = semaphoreName;
        this.nameRule = nameRule;
    }

    /** @return the description of {@code name}, or null if it is not one of the starter's properties */
    static @Nullable SettingDescription of(ConfigurationPropertyName name) {
        if (!ROOT.equals(name) && !ROOT.isAncestorOf(name)) {
            return null;
        }
        StringBuilder property = new StringBuilder(DistributedSemaphoreProperties.PREFIX);
        Class<?> owner = null;
        @Nullable RecordComponent component = null;
        ResolvableType type = ResolvableType.forClass(DistributedSemaphoreProperties.class);
        String semaphoreName = null;
        SemaphoreName nameRule = null;
        for (int i = ROOT.getNumberOfElements(); i < name.getNumberOfElements(); i++) {
            Class<?> current = type.resolve(Object.class);
            if (current.isRecord()) {
                String element = name.getElement(i, Form.UNIFORM);
                component = Arrays.stream(current.getRecordComponents())
                        .filter(candidate -> candidate.getName().toLowerCase(Locale.ROOT).equals(element))
                        .findFirst().orElse(null);
                if (component == null) {
                    return null;
                }
                owner = current;
                property.append('.').append(DataObjectPropertyName.toDashedForm(component.getName()));
                type = ResolvableType.forType(component.getGenericType());
            } else if (Map.class.isAssignableFrom(current) && component != null) {
                semaphoreName = name.getElement(i, Form.ORIGINAL);
                nameRule = keyRule(Objects.requireNonNull(owner, "owner"), component);
                property.append(asElement(semaphoreName));
                type = type.asMap().getGeneric(1);
                component = null;
            } else {
                return null;
            }
        }
        return new SettingDescription(property.toString(), owner, component, type.resolve(Object.class),
                semaphoreName, nameRule);
    }

    /** @return the property in the dashed form the documentation and the IDE use */
    String property() {
        return property;
    }

    /** @return true if the property is a semaphore's name itself, {@code semaphores[<name>]} */
    boolean isSemaphoreName() {
        return component == null && semaphoreName != null;
    }

    /** @return true if the property's own declaration carries the constraint {@code code} (its simple name) */
    boolean isConstrainedBy(@Nullable String code) {
        return component != null && Arrays.stream(field().getAnnotations())
                .anyMatch(annotation -> annotation.annotationType().getSimpleName().equals(code));
    }

    /** @return the last semaphore name in the property, e.g. "reports", or null if it has none */
    @Nullable String semaphoreName() {
        return semaphoreName;
    }

    /** @return what a semaphore name may be: "1 to 200 characters without ..." */
    String nameRule() {
        return rule(nameRule);
    }

    /** @return what the property may be set to, e.g. "a duration from 100ms to 24h (such as 500ms, 30s or 5m)" */
    String allowed() {
        if (isGroup()) {
            return "settings of their own: " + group();
        }
        Class<?> type = component().getType();
        Field field = field();
        if (type == boolean.class || type == Boolean.class) {
            return "true or false";
        }
        if (type == int.class || type == Integer.class) {
            Range range = field.getAnnotation(Range.class);
            return range == null ? "a whole number from " + Integer.MIN_VALUE + " to " + Integer.MAX_VALUE
                    : "a whole number from " + range.min() + " to " + range.max();
        }
        if (type == Duration.class) {
            return durationRange(field.getAnnotation(DurationMin.class), field.getAnnotation(DurationMax.class));
        }
        if (type == String.class) {
            SemaphoreName rule = field.getAnnotation(SemaphoreName.class);
            return rule != null ? rule(rule) : "text";
        }
        return type.isEnum() ? constants(type) : type.getSimpleName();
    }

    /** @return true if the property holds settings rather than a value: {@code defaults}, {@code semaphores.<name>} */
    boolean isGroup() {
        return Map.class.isAssignableFrom(valueType) || valueType.isRecord();
    }

    /**
     * @return the settings directly below this group in dashed form ({@code permits}, {@code lease-time},
     *         ...); empty for a value and for a group of named semaphores, under which any name is allowed
     */
    List<String> settings() {
        return valueType.isRecord() ? Arrays.stream(valueType.getRecordComponents())
                .map(setting -> DataObjectPropertyName.toDashedForm(setting.getName())).toList() : List.of();
    }

    /**
     * @return how the settings of a group are written, e.g.
     *         "distributed-semaphore.defaults.<setting>, where <setting> is one of permits, lease-time, ..."
     */
    String group() {
        if (Map.class.isAssignableFrom(valueType)) {
            return property + ".<name>.<setting>, where <setting> is one of "
                    + settingsOf(ResolvableType.forType(component().getGenericType()).asMap().getGeneric(1).resolve(Object.class));
        }
        return property + ".<setting>, where <setting> is one of " + settingsOf(valueType);
    }

    /** @return what a value of the wrong type is not, e.g. "a duration (such as 500ms, 30s or 5m)" */
    String kind() {
        if (valueType == boolean.class || valueType == Boolean.class) {
            return "true or false";
        }
        if (valueType == int.class || valueType == Integer.class) {
            return "a whole number";
        }
        if (valueType.isEnum()) {
            return constants(valueType);
        }
        return valueType == Duration.class ? "a duration" + DURATION_EXAMPLES : "a " + valueType.getSimpleName();
    }

    /**
     * @return what removing the property gives, after "remove it": "to use the default (30s)",
     *         "to use distributed-semaphore.defaults.lease-time", "for no shared cap"; null if nothing
     */
    @Nullable String whenRemoved() {
        if (component == null) {
            return null;
        }
        WhenLeftOut leftOut = field().getAnnotation(WhenLeftOut.class);
        if (leftOut != null) {
            return "for " + leftOut.value();
        }
        if (owner == DistributedSemaphoreProperties.Semaphore.class) {
            boolean hasDefault = Arrays.stream(DistributedSemaphoreProperties.Defaults.class.getRecordComponents())
                    .anyMatch(candidate -> candidate.getName().equals(component().getName()));
            return hasDefault ? "to use " + DistributedSemaphoreProperties.PREFIX + ".defaults."
                    + DataObjectPropertyName.toDashedForm(component().getName()) : null;
        }
        String value = defaultValue();
        return value == null ? null : value.isEmpty() ? "to use the defaults" : "to use the default (" + value + ")";
    }

    /**
     * @return the property {@code setting} of the semaphore {@code name} as the documentation writes
     *         it: {@code distributed-semaphore.semaphores.exports.permits}, brackets where the name needs them
     */
    static String ofSemaphore(String name, String setting) {
        return DistributedSemaphoreProperties.PREFIX + ".semaphores" + asElement(name) + "." + setting;
    }

    /** @return the {@code @DefaultValue} of the property ("" for a group of settings), or null if it has none */
    @Nullable String defaultValue() {
        if (component == null) {
            return null;
        }
        try {
            RecordComponent[] components = owner().getRecordComponents();
            Class<?>[] types = Arrays.stream(components).map(RecordComponent::getType).toArray(Class<?>[]::new);
            int index = 0;
            while (!components[index].getName().equals(component().getName())) {
                index++;
            }
            Parameter parameter = owner().getDeclaredConstructor(types).getParameters()[index];
            DefaultValue defaultValue = parameter.getAnnotation(DefaultValue.class);
            return defaultValue == null ? null : String.join(",", defaultValue.value());
        } catch (NoSuchMethodException e) {
            return null;
        }
    }

    /** @return the duration as a person writes it in a property: "100ms", "30s", "24h" */
    static String format(Duration duration) {
        if (duration.isZero()) {
            return "0";
        }
        if (duration.toNanosPart() % 1_000_000 != 0) {
            return duration.toString();
        }
        long millis = duration.toMillis();
        if (millis % 3_600_000 == 0) {
            return millis / 3_600_000 + "h";
        }
        if (millis % 60_000 == 0) {
            return millis / 60_000 + "m";
        }
        return millis % 1000 == 0 ? millis / 1000 + "s" : millis + "ms";
    }

    /** @return the record component; only called for a property that is one (not the root, not a name) */
    private RecordComponent component() {
        return Objects.requireNonNull(component, "component");
    }

    /** @return the record of the component; set whenever {@link #component} is */
    private Class<?> owner() {
        return Objects.requireNonNull(owner, "owner");
    }

    private Field field() {
        try {
            return owner().getDeclaredField(component().getName());
        } catch (NoSuchFieldException e) {
            throw new IllegalStateException("A record component without its field: " + component, e);
        }
    }

    /** The rule's message without its "must be": "1 to 200 characters without ...". */
    private static String rule(@Nullable SemaphoreName rule) {
        return rule == null ? "a valid semaphore name" : rule.message().replaceFirst("^must be ", "");
    }

    private static @Nullable SemaphoreName keyRule(Class<?> owner, RecordComponent map) {
        try {
            if (owner.getDeclaredField(map.getName()).getAnnotatedType() instanceof AnnotatedParameterizedType type) {
                return type.getAnnotatedActualTypeArguments()[0].getAnnotation(SemaphoreName.class);
            }
            return null;
        } catch (NoSuchFieldException e) {
            return null;
        }
    }

    private static String durationRange(@Nullable DurationMin min, @Nullable DurationMax max) {
        if (min != null && max != null) {
            return "a duration from " + format(min) + " to " + format(max) + DURATION_EXAMPLES;
        }
        if (min != null) {
            return "a duration of at least " + format(min) + DURATION_EXAMPLES;
        }
        return max != null ? "a duration of at most " + format(max) + DURATION_EXAMPLES : "a duration" + DURATION_EXAMPLES;
    }

    private static String format(DurationMin min) {
        return format(Duration.ofDays(min.days()).plusHours(min.hours()).plusMinutes(min.minutes())
                .plusSeconds(min.seconds()).plusMillis(min.millis()).plusNanos(min.nanos()));
    }

    private static String format(DurationMax max) {
        return format(Duration.ofDays(max.days()).plusHours(max.hours()).plusMinutes(max.minutes())
                .plusSeconds(max.seconds()).plusMillis(max.millis()).plusNanos(max.nanos()));
    }

    /** The values of an enum as a property takes them: "fail or warn". */
    private static String constants(Class<?> type) {
        List<String> values = Arrays.stream(type.getEnumConstants())
                .map(constant -> ((Enum<?>) constant).name().toLowerCase(Locale.ROOT).replace('_', '-')).toList();
        return values.size() == 1 ? values.get(0)
                : String.join(", ", values.subList(0, values.size() - 1)) + " or " + values.get(values.size() - 1);
    }

    private static String settingsOf(Class<?> record) {
        return Arrays.stream(record.getRecordComponents())
                .map(component -> DataObjectPropertyName.toDashedForm(component.getName()))
                .collect(Collectors.joining(", "));
    }

    /** A key that is not a plain dashed word must be written in brackets. */
    private static String asElement(String key) {
        return key.matches("[a-z0-9][a-z0-9-]*") ? "." + key : "[" + key + "]";
    }
}
