package io.github.redissemaphore.autoconfigure;

import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.BiPredicate;
import java.util.regex.Pattern;

import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName.Form;
import org.jspecify.annotations.Nullable;

/**
 * A property under {@code distributed-semaphore} that {@link DistributedSemaphoreProperties} has
 * no place for, such as {@code semaphores.pricing.permit}: a typo that would otherwise leave the
 * setting at its default without a word. Told as the user wrote it, with the settings allowed where
 * it stands and the closest of them, all read off the properties type through
 * {@link SettingDescription}: a property added there is known here without a change.
 */
final class UnknownProperty {

    private static final Pattern PLAIN_ELEMENT = Pattern.compile("[A-Za-z0-9_-]+");
    private static final ConfigurationPropertyName DEFAULTS =
            ConfigurationPropertyName.of(DistributedSemaphoreProperties.PREFIX + ".defaults");
    /** Any semaphore name: what a semaphore may have set does not depend on its name. */
    private static final String ANY_SEMAPHORE = "any";

    private final ConfigurationPropertyName name;
    private final int known;
    private final SettingDescription parent;

    private UnknownProperty(ConfigurationPropertyName name, int known, SettingDescription parent) {
        this.name = name;
        this.known = known;
        this.parent = parent;
    }

    /** @return {@code name} explained, or null if it is not under {@code distributed-semaphore} or is known */
    static @Nullable UnknownProperty of(ConfigurationPropertyName name) {
        for (int known = name.getNumberOfElements() - 1; known > 0; known--) {
            SettingDescription parent = SettingDescription.of(name.chop(known));
            if (parent != null) {
                return new UnknownProperty(name, known, parent);
            }
        }
        return null;
    }

    /** @return the property as written: {@code distributed-semaphore.semaphores.pricing.permit} */
    String property() {
        return written(name);
    }

    /** @return why it is refused, with the closest known property when one is close */
    String reason() {
        if (!parent.isGroup()) {
            return parent.property() + " takes a value, not settings";
        }
        String perSemaphore = perSemaphoreOnly();
        if (perSemaphore != null) {
            return "unknown property: " + perSemaphore.substring(perSemaphore.lastIndexOf('.') + 1)
                    + " is set per semaphore, as " + perSemaphore + ", and has no default";
        }
        return closest().map(closest -> "unknown property: did you mean "
                        + written(closest.subName(known)) + "?")
                .orElse("unknown property");
    }

    /** @return what may stand where the unknown element does: the settings of the group it is in */
    String allowed() {
        return parent.isGroup() ? String.join(", ", parent.settings()) : parent.allowed();
    }

    /** @return what to change */
    String action() {
        if (!parent.isGroup()) {
            return "Set " + parent.property() + " itself, to " + parent.allowed() + ".";
        }
        String perSemaphore = perSemaphoreOnly();
        if (perSemaphore != null) {
            return "Remove " + property() + ", and set " + perSemaphore + " for each semaphore that needs it.";
        }
        return closest().map(closest -> "Rename " + property() + " to " + written(closest) + ".")
                .orElse("Remove " + property() + ", or write one of the settings allowed under " + parent.property()
                        + ": " + allowed() + ".");
    }

    /**
     * A setting of each semaphore that {@code defaults} has no place for ({@code total-permits}: a
     * cap is per semaphore), written under {@code defaults}: where it belongs,
     * {@code distributed-semaphore.semaphores.<name>.total-permits}; null for anything else.
     */
    private @Nullable String perSemaphoreOnly() {
        if (!DEFAULTS.equals(name.chop(known)) || name.getNumberOfElements() != known + 1) {
            return null;
        }
        SettingDescription described = SettingDescription.of(ConfigurationPropertyName.of(
                SettingDescription.ofSemaphore(ANY_SEMAPHORE, name.getElement(known, Form.UNIFORM))));
        if (described == null || described.isGroup()) {
            return null;
        }
        String setting = described.property().substring(described.property().lastIndexOf('.') + 1);
        return DistributedSemaphoreProperties.PREFIX + ".semaphores.<name>." + setting;
    }

    /**
     * The known property the user most likely meant: the unknown element replaced by the setting
     * nearest to it ({@code permit}: {@code permits}), else a level the user left out put in
     * ({@code distributed-semaphore.permits}: {@code distributed-semaphore.defaults.permits},
     * {@code distributed-semaphore.pricing.permits}: {@code distributed-semaphore.semaphores.pricing.permits}).
     * Only a candidate that names a value is offered.
     */
    private Optional<ConfigurationPropertyName> closest() {
        String unknown = name.getElement(known, Form.UNIFORM);
        ConfigurationPropertyName rest = name.subName(known + 1);
        List<String> settings = parent.settings();
        List<String> near = settings.stream()
                .filter(setting -> isValue(candidate(setting, rest)) && isNear(unknown, uniform(setting), settings))
                .sorted(Comparator.comparingInt(setting -> distance(unknown, uniform(setting))))
                .toList();
        if (!near.isEmpty()) {
            return Optional.of(candidate(near.get(0), rest));
        }
        ConfigurationPropertyName below = name.subName(known);
        return settings.stream().map(group -> candidate(group, below)).filter(UnknownProperty::isValue).findFirst();
    }

    private ConfigurationPropertyName candidate(String setting, ConfigurationPropertyName rest) {
        return name.chop(known).append(setting).append(rest);
    }

    private static boolean isValue(ConfigurationPropertyName candidate) {
        SettingDescription setting = SettingDescription.of(candidate);
        return setting != null && !setting.isGroup();
    }

    /**
     * A third of the name's letters wrong at most ({@code permit}, {@code leaseTme}), or the name
     * is part of one setting only ({@code lease} for {@code lease-time}), or the start of one only
     * ({@code wait} for {@code wait-time}, though {@code max-waiters} has it too): never a guess among several.
     */
    private static boolean isNear(String unknown, String setting, List<String> settings) {
        if (distance(unknown, setting) <= Math.max(1, unknown.length() / 3)) {
            return true;
        }
        return unknown.length() >= 4 && (isOnlyOneWith(unknown, setting, settings, String::contains)
                || isOnlyOneWith(unknown, setting, settings, String::startsWith));
    }

    /** Whether {@code setting} (uniform) is the one of all {@code settings} that has {@code unknown} as {@code how} tells. */
    private static boolean isOnlyOneWith(String unknown, String setting, List<String> settings,
                                         BiPredicate<String, String> how) {
        return how.test(setting, unknown)
                && settings.stream().filter(other -> how.test(uniform(other), unknown)).count() == 1;
    }

    /** The form relaxed binding compares, letters and digits only: {@code lease_time} is {@code leasetime}. */
    private static String uniform(String setting) {
        return ConfigurationPropertyName.of(setting).getElement(0, Form.UNIFORM);
    }

    /** Levenshtein distance: the fewest letters to insert, delete or replace to turn one into the other. */
    static int distance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int replace = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(replace, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }

    /** Each element as the source has it ({@code leaseTme}, not {@code leasetme}); a name with dots in brackets. */
    private static String written(ConfigurationPropertyName name) {
        StringBuilder written = new StringBuilder();
        for (int i = 0; i < name.getNumberOfElements(); i++) {
            String element = name.getElement(i, Form.ORIGINAL);
            if (!PLAIN_ELEMENT.matcher(element).matches()) {
                written.append('[').append(element).append(']');
            } else {
                written.append(written.isEmpty() ? "" : ".").append(element);
            }
        }
        return written.toString();
    }
}
