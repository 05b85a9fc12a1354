package io.github.redissemaphore.sample.exports;

import jakarta.validation.constraints.Pattern;

import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /tenants/{tenant}/exports} runs an export, or answers 429, a problem naming the
 * semaphore and the reason, when the tenant's permits stay busy anywhere in the fleet for its whole wait.
 */
@RestController
public class ExportController {

    private final ExportService exports;

    public ExportController(ExportService exports) {
        this.exports = exports;
    }

    /**
     * The tenant becomes part of a semaphore name, so it is kept to characters every name may hold;
     * Spring MVC validates the constraint itself and answers 400 when it fails.
     */
    @PostMapping("/tenants/{tenant}/exports")
    public Export export(@PathVariable @Pattern(regexp = "[A-Za-z0-9_.-]{1,64}") String tenant) {
        return exports.export(tenant);
    }
}
