package io.github.redissemaphore.actuate;

import io.github.redissemaphore.core.SemaphoreSettings;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;

import org.springframework.boot.actuate.endpoint.EndpointId;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.InvocationContext;
import org.springframework.boot.actuate.endpoint.OperationType;
import org.springframework.boot.actuate.endpoint.invoke.OperationInvoker;
import org.springframework.boot.actuate.endpoint.invoke.OperationInvokerAdvisor;
import org.springframework.boot.actuate.endpoint.invoke.OperationParameters;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.boot.actuate.endpoint.web.WebServerNamespace;

/**
 * Makes the {@code "limit"} key of {@link SemaphoresEndpoint#limit}'s request required:
 * {@code {"limit": N}} sets the runtime limit, {@code {"limit": null}} clears it, and a request
 * without the key (no body, {@code {}}, a misspelt {@code {"limt": 5}}) is refused with 400 and a
 * message that says what to send, instead of clearing the limit. For the base name of a capped
 * semaphore the key is {@code "totalLimit"} (the cap over all its keys), and {@code "limit"} is
 * refused with a message that says where a key's limit is set. A request with {@code "rateLimit"}
 * (or {@code "ratePeriod"}) is about the runtime rate, and needs no {@code "limit"}.
 *
 * <p>Why an advisor: Spring Boot merges a write operation's JSON body into the operation's
 * arguments and hands a parameter that may be null the same null for an explicit {@code null} and
 * for a key that is not there. The arguments it merged still tell them apart (a key with a null
 * value is in them), so this looks at them before the operation is invoked. On the web it also
 * answers the operation's other 400s (a limit out of range, an unknown semaphore) with their
 * message in the body, which Boot's error page leaves out by default; elsewhere (JMX, where every
 * parameter is always passed) the exception goes through as it is.
 */
public final class LimitRequestCheck implements OperationInvokerAdvisor {

    /** The name of the operation's parameter, and the key of its JSON body. */
    static final String LIMIT = "limit";
    /** The same of a cap's runtime limit. */
    static final String TOTAL_LIMIT = "totalLimit";
    /** The keys of a runtime rate: a request with either is about the rate and needs no {@value #LIMIT}. */
    static final String RATE_LIMIT = "rateLimit";
    static final String RATE_PERIOD = "ratePeriod";
    static final String WHAT_TO_SEND_FOR_RATE = "send {\"rateLimit\": N, \"ratePeriod\": \"1m\"} to set the runtime rate"
            + " every JVM follows (N from 1 to " + SemaphoreSettings.MAX_RATE_LIMIT + ", the period from "
            + SemaphoreSettings.MIN_RATE_PERIOD_MILLIS + " ms to 24 h), or {\"rateLimit\": 0} to clear it";
    static final String WHAT_TO_SEND = "Send {\"limit\": N} to set the runtime limit every JVM follows (N from 1 to "
            + SemaphoreSettings.MAX_PERMITS + "), or {\"limit\": null} to clear it";

    /** Whether a name is the base name of a capped semaphore, which takes {@value #TOTAL_LIMIT} instead. */
    private final Predicate<String> isCap;

    /** @param isCap whether a name is the base name of a capped semaphore ({@link SemaphoresEndpoint#isCap}) */
    public LimitRequestCheck(Predicate<String> isCap) {
        this.isCap = isCap;
    }

    /** @return what to send to the base name of a capped semaphore */
    static String capTakesTotalLimit(String name) {
        return "Send {\"totalLimit\": N} to set the runtime cap of all keys of '" + name + "' together, which every JVM"
                + " follows (N from 1 to " + SemaphoreSettings.MAX_PERMITS + "), or {\"totalLimit\": null} to clear it;"
                + " one key's limit is set on its own name: POST /actuator/semaphores/" + name + ":<key> with"
                + " {\"limit\": N}";
    }

    /** @return why a semaphore without a cap refuses {@value #TOTAL_LIMIT} */
    static String noCap(String name) {
        return "Semaphore '" + name + "' has no cap over its keys (total-permits): " + WHAT_TO_SEND;
    }

    @Override
    public OperationInvoker apply(EndpointId endpointId, OperationType operationType, OperationParameters parameters,
                                  OperationInvoker invoker) {
        if (!EndpointId.of(SemaphoresEndpoint.ID).equals(endpointId) || operationType != OperationType.WRITE
                || parameters.stream().noneMatch(parameter -> LIMIT.equals(parameter.getName()))) {
            return invoker;
        }
        return context -> {
            try {
                String cap = context.getArguments().get("name") instanceof String name && isCap.test(name) ? name : null;
                String required = cap != null ? TOTAL_LIMIT : LIMIT;
                // (A request about the rate needs no "limit": it leaves the permits' limit as it is.)
                boolean aboutRate = cap == null && (context.getArguments().containsKey(RATE_LIMIT)
                        || context.getArguments().containsKey(RATE_PERIOD));
                if (!aboutRate && !context.getArguments().containsKey(required)) {
                    String message = (cap != null ? capTakesTotalLimit(cap) : WHAT_TO_SEND) + "; the request has no \""
                            + required + "\"" + sentInstead(context) + ".";
                    throw new InvalidEndpointRequestException(message, message);
                }
                return invoker.invoke(context);
            } catch (InvalidEndpointRequestException e) {
                if (!context.canResolve(WebServerNamespace.class)) {
                    throw e;
                }
                Map<String, Object> body = new LinkedHashMap<>();
                body.put("status", WebEndpointResponse.STATUS_BAD_REQUEST);
                body.put("error", "Bad Request");
                body.put("message", e.getReason());
                return new WebEndpointResponse<>(body, WebEndpointResponse.STATUS_BAD_REQUEST);
            }
        };
    }

    /** @return the keys the body had instead, e.g. {@code  (it has "limt")}; nothing when it had none */
    private static String sentInstead(InvocationContext context) {
        // the path variables are arguments too
        Set<String> keys = new TreeSet<>(context.getArguments().keySet());
        keys.remove("name");
        return keys.isEmpty() ? "" : " (it has \"" + String.join("\", \"", keys) + "\")";
    }
}
