package io.github.redissemaphore.sample.live;

import java.util.Optional;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType;
import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.web.ExposableWebEndpoint;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.boot.actuate.endpoint.web.WebEndpointHttpMethod;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/**
 * Whether the page may offer a force-release button: the starter's {@code semaphores} endpoint
 * must be exposed over HTTP with its delete operation, which exists only once access to the
 * endpoint is opened ({@code management.endpoint.semaphores.access=unrestricted}), and it must be
 * served on the page's own port. Asks Boot's own view of the exposed endpoints, so exposure,
 * access and base path are judged exactly as the actuator judges them.
 */
@Component
public class ForceReleaseAccess {

    private static final EndpointId SEMAPHORES = EndpointId.of("semaphores");

    private final ObjectProvider<PathMappedEndpoints> endpoints;
    private final Environment environment;

    public ForceReleaseAccess(ObjectProvider<PathMappedEndpoints> endpoints, Environment environment) {
        this.endpoints = endpoints;
        this.environment = environment;
    }

    /**
     * @return the endpoint's path, e.g. {@code /actuator/semaphores}, to which the page appends
     *         {@code /<name>/<permitId>} and sends DELETE; empty when the operation is not open here
     */
    public Optional<String> endpointPath() {
        PathMappedEndpoints mapped = endpoints.getIfAvailable();
        if (mapped == null || ManagementPortType.get(environment) == ManagementPortType.DIFFERENT
                || !(mapped.getEndpoint(SEMAPHORES) instanceof ExposableWebEndpoint endpoint)) {
            return Optional.empty();
        }
        boolean deletable = endpoint.getOperations().stream()
                .anyMatch(operation -> operation.getRequestPredicate().getHttpMethod() == WebEndpointHttpMethod.DELETE);
        return deletable ? Optional.ofNullable(mapped.getPath(SEMAPHORES)) : Optional.empty();
    }
}
