package io.github.redissemaphore.sample.payments;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /payments} charges, waiting for a permit and a slot of the rate when the fleet is
 * busy (429 when none came in time, or at once when the queue is full).
 */
@RestController
public class PaymentController {

    private final PaymentService payments;

    public PaymentController(PaymentService payments) {
        this.payments = payments;
    }

    @PostMapping("/payments")
    public PaymentService.Payment charge() {
        return payments.charge();
    }
}
