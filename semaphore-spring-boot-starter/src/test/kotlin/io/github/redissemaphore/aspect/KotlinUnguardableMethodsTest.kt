package io.github.redissemaphore.aspect

import io.github.redissemaphore.annotation.DistributedSemaphore
import io.github.redissemaphore.starter.StartupFailures
import io.github.redissemaphore.test.RedisServer
import io.github.redissemaphore.test.RedisTest
import org.assertj.core.api.Assertions.assertThat
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.extension.ExtendWith
import org.springframework.boot.test.system.CapturedOutput
import org.springframework.boot.test.system.OutputCaptureExtension
import java.util.function.Supplier

/**
 * Kotlin classes and functions are final unless declared `open` (or opened by the kotlin-spring /
 * all-open compiler plugin, which this build does not apply): a `@DistributedSemaphore` on them
 * could never be guarded. The start-up says so, with the Kotlin remedy; an open class with open
 * functions is guarded as in Java.
 */
@RedisTest
@ExtendWith(OutputCaptureExtension::class)
class KotlinUnguardableMethodsTest(private val server: RedisServer) {

    @Test
    fun `a final class is refused with the Kotlin remedy`(output: CapturedOutput) {
        val report = StartupFailures.failureReport(output, server, arrayOf(FinalByDefault::class.java))
        assertThat(report)
            .contains("Method: ${FinalByDefault::class.java.name}.quote(String)")
            .contains("Reason: its class is final: a class-based (CGLIB) proxy cannot subclass it")
            .contains("declare the class and the function open, or let the kotlin-spring compiler plugin open them")
            .doesNotContain("remove final")
    }

    @Test
    fun `a final function of an open class is refused with the Kotlin remedy`(output: CapturedOutput) {
        val report = StartupFailures.failureReport(output, server, arrayOf(OpenClassFinalFunction::class.java))
        assertThat(report)
            .contains("Method: ${OpenClassFinalFunction::class.java.name}.quote(String)")
            .contains("Reason: it is final: a class-based (CGLIB) proxy cannot override it")
            .contains("declare the class and the function open")
            .contains("distributed-semaphore.unguardable-methods=warn")
    }

    @Test
    fun `an open function of an open class starts and is guarded`() {
        StartupFailures.run(server, arrayOf(Opened::class.java)).use { context ->
            val bean = context.getBean(Opened::class.java)
            assertThat(UnguardableMethodsTest.runsWithoutAPermit(context, "kt-unguardable", Supplier { bean.quote("x") }))
                .isFalse()
        }
    }

    class FinalByDefault {
        @DistributedSemaphore("kt-unguardable")
        fun quote(item: String): String = item
    }

    open class OpenClassFinalFunction {
        @DistributedSemaphore("kt-unguardable")
        fun quote(item: String): String = item
    }

    open class Opened {
        @DistributedSemaphore("kt-unguardable")
        open fun quote(item: String): String = item
    }
}
