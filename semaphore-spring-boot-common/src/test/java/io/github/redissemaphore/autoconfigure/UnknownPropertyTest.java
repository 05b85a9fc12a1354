package io.github.redissemaphore.autoconfigure;

import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The known properties come from {@link DistributedSemaphoreProperties} itself: every setting it
 * has, one added later included, is offered for a typo of it, at every level.
 */
class UnknownPropertyTest {

    @TestFactory
    Stream<DynamicTest> everySettingIsOfferedForATypoOfIt() {
        List<String> properties = new ArrayList<>();
        settings(DistributedSemaphoreProperties.class, "distributed-semaphore", properties);
        return properties.stream().map(property -> DynamicTest.dynamicTest(property, () -> {
            String typo = property.substring(0, property.length() - 1);
            UnknownProperty unknown = UnknownProperty.of(ConfigurationPropertyName.of(typo));
            assertThat(unknown).isNotNull();
            assertThat(unknown.action()).isEqualTo("Rename " + typo + " to " + property + ".");
        }));
    }

    @Test
    void theDistanceCountsLettersInsertedDeletedOrReplaced() {
        assertThat(UnknownProperty.distance("permit", "permits")).isEqualTo(1);
        assertThat(UnknownProperty.distance("leasetme", "leasetime")).isEqualTo(1);
        assertThat(UnknownProperty.distance("fair", "fiar")).isEqualTo(2);
        assertThat(UnknownProperty.distance("", "wait")).isEqualTo(4);
        assertThat(UnknownProperty.distance("same", "same")).isZero();
    }

    /** Each value below {@code type}; a semaphore of the map as {@code <prefix>.semaphores.pricing}. */
    private static void settings(Class<?> type, String prefix, List<String> into) {
        for (RecordComponent component : type.getRecordComponents()) {
            String name = prefix + "." + DataObjectPropertyName.toDashedForm(component.getName());
            if (component.getType().isRecord()) {
                settings(component.getType(), name, into);
            } else if (component.getType() == Map.class) {
                settings(DistributedSemaphoreProperties.Semaphore.class, name + ".pricing", into);
            } else {
                into.add(name);
            }
        }
    }
}
