package io.github.redissemaphore.autoconfigure.aot;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.annotation.JsonProperty;
import io.github.redissemaphore.actuate.SemaphoresEndpoint;
import io.github.redissemaphore.annotation.DistributedSemaphore;
import io.github.redissemaphore.aspect.DistributedSemaphoreAspect;
import io.github.redissemaphore.autoconfigure.DistributedSemaphoreProperties;
import io.github.redissemaphore.autoconfigure.SemaphoreName;
import io.github.redissemaphore.autoconfigure.SemaphoreNameValidator;
import io.github.redissemaphore.core.SemaphoreState;

import java.lang.reflect.Method;
import java.lang.reflect.RecordComponent;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.ReflectionHintsPredicates;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.beans.factory.aot.AotServices;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.test.context.FilteredClassLoader;

/**
 * The starter's registrars, as Spring's AOT processing finds them (META-INF/spring/aot.factories),
 * cover every type the starter reads or calls reflectively: one predicate per type and member.
 */
class RuntimeHintsTest {

    /** Bound by Spring Boot and checked by Bean Validation. */
    private static final List<Class<?>> PROPERTIES = List.of(DistributedSemaphoreProperties.class,
            DistributedSemaphoreProperties.Defaults.class, DistributedSemaphoreProperties.Semaphore.class,
            DistributedSemaphoreProperties.Metrics.class, DistributedSemaphoreProperties.ProblemDetails.class,
            DistributedSemaphoreProperties.Resilience4j.class, DistributedSemaphoreProperties.ConcurrencyLimit.class);

    /** Written by Jackson as the endpoint's responses. */
    private static final List<Class<?>> RESPONSES = List.of(SemaphoresEndpoint.SemaphoresDescriptor.class,
            SemaphoresEndpoint.SemaphoreSummary.class, SemaphoresEndpoint.SemaphoreDescriptor.class,
            SemaphoresEndpoint.HolderDescriptor.class, SemaphoresEndpoint.WaiterDescriptor.class,
            SemaphoresEndpoint.OtherLimitDescriptor.class, SemaphoresEndpoint.ReleaseDescriptor.class,
            SemaphoresEndpoint.CapDescriptor.class, SemaphoresEndpoint.KeyDescriptor.class,
            SemaphoresEndpoint.RateDescriptor.class);

    /** The core's records that the endpoint's responses unwrap ({@code @JsonUnwrapped}): written by Jackson too. */
    private static final List<Class<?>> UNWRAPPED = List.of(SemaphoreState.class, SemaphoreState.Holder.class,
            SemaphoreState.Waiter.class, SemaphoreState.Total.class);

    private static final ReflectionHintsPredicates REFLECTION = RuntimeHintsPredicates.reflection();

    private final RuntimeHints hints = registered(getClass().getClassLoader());

    @Test
    void theAdviceOfTheAspectCanBeInvoked() {
        assertThat(REFLECTION.onMethodInvocation(DistributedSemaphoreAspect.class, "guard")).accepts(hints);
    }

    @Test
    void theAttributesOfTheAnnotationsCanBeRead() {
        for (Class<?> annotation : List.of(DistributedSemaphore.class, SemaphoreName.class)) {
            for (Method attribute : annotation.getDeclaredMethods()) {
                assertThat(REFLECTION.onMethodInvocation(attribute)).as(attribute.toString()).accepts(hints);
            }
        }
    }

    @Test
    void thePropertiesCanBeBoundAndValidated() {
        assertThat(PROPERTIES).as("every record of the properties is listed here")
                .containsAll(nestedRecords(DistributedSemaphoreProperties.class));
        for (Class<?> type : PROPERTIES) {
            assertThat(REFLECTION.onConstructorInvocation(canonicalConstructor(type))).as(type.getName())
                    .accepts(hints);
            for (RecordComponent component : type.getRecordComponents()) {
                assertThat(REFLECTION.onFieldAccess(type, component.getName())).as(component.toString())
                        .accepts(hints);
                assertThat(REFLECTION.onMethodInvocation(component.getAccessor())).as(component.toString())
                        .accepts(hints);
            }
        }
        assertThat(REFLECTION.onConstructorInvocation(SemaphoreNameValidator.class.getDeclaredConstructors()[0]))
                .accepts(hints);
    }

    @Test
    void theOperationsOfTheEndpointCanBeInvokedAndTheirResponsesWritten() {
        assertThat(RESPONSES).as("every record of the endpoint is listed here")
                .containsAll(nestedRecords(SemaphoresEndpoint.class));
        List<Method> operations = operations();
        assertThat(operations).extracting(Method::getName).containsExactlyInAnyOrder("semaphores", "semaphore",
                "limit", "release");
        for (Method operation : operations) {
            assertThat(REFLECTION.onMethodInvocation(operation)).as(operation.toString()).accepts(hints);
        }
        for (Class<?> type : Stream.concat(RESPONSES.stream(), UNWRAPPED.stream()).toList()) {
            assertThat(REFLECTION.onType(type)).as(type.getName()).accepts(hints);
            for (RecordComponent component : type.getRecordComponents()) {
                assertThat(REFLECTION.onMethodInvocation(component.getAccessor())).as(component.toString())
                        .accepts(hints);
            }
        }
        // the members a view adds to the record it unwraps (a lease's time left as text, say)
        List<Method> added = RESPONSES.stream().flatMap(type -> Arrays.stream(type.getDeclaredMethods()))
                .filter(method -> method.isAnnotationPresent(JsonProperty.class)).toList();
        assertThat(added).isNotEmpty();
        for (Method method : added) {
            assertThat(REFLECTION.onMethodInvocation(method)).as(method.toString()).accepts(hints);
        }
    }

    @Test
    void withoutActuatorThereAreNoEndpointHintsAndNoFailure() {
        RuntimeHints withoutActuator = registered(new FilteredClassLoader(Endpoint.class));

        assertThat(REFLECTION.onType(SemaphoresEndpoint.HolderDescriptor.class)).rejects(withoutActuator);
        assertThat(REFLECTION.onMethodInvocation(DistributedSemaphoreAspect.class, "guard")).accepts(withoutActuator);
    }

    private static RuntimeHints registered(ClassLoader classLoader) {
        AotServices<RuntimeHintsRegistrar> registrars = AotServices.factories(RuntimeHintsTest.class.getClassLoader())
                .load(RuntimeHintsRegistrar.class);
        assertThat(registrars.asList()).hasAtLeastOneElementOfType(DistributedSemaphoreRuntimeHints.class)
                .hasAtLeastOneElementOfType(SemaphoresEndpointRuntimeHints.class);
        RuntimeHints hints = new RuntimeHints();
        registrars.forEach(registrar -> registrar.registerHints(hints, classLoader));
        return hints;
    }

    private static List<Method> operations() {
        return Arrays.stream(SemaphoresEndpoint.class.getDeclaredMethods())
                .filter(method -> method.isAnnotationPresent(ReadOperation.class)
                        || method.isAnnotationPresent(WriteOperation.class)
                        || method.isAnnotationPresent(DeleteOperation.class))
                .toList();
    }

    private static List<Class<?>> nestedRecords(Class<?> type) {
        return Arrays.stream(type.getDeclaredClasses()).filter(Class::isRecord).toList();
    }

    private static java.lang.reflect.Constructor<?> canonicalConstructor(Class<?> record) {
        Class<?>[] types = Arrays.stream(record.getRecordComponents()).map(RecordComponent::getType)
                .toArray(Class<?>[]::new);
        try {
            return record.getDeclaredConstructor(types);
        } catch (NoSuchMethodException e) {
            throw new IllegalStateException(record + " has no canonical constructor", e);
        }
    }
}
