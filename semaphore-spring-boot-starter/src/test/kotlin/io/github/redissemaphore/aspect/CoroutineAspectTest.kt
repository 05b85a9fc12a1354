package io.github.redissemaphore.aspect

import io.github.redissemaphore.annotation.DistributedSemaphore
import io.github.redissemaphore.core.SemaphoreRegistry
import io.github.redissemaphore.core.SemaphoreRejectedException
import io.github.redissemaphore.core.SemaphoreState
import io.github.redissemaphore.starter.Occupancy
import io.github.redissemaphore.starter.StarterContexts
import io.github.redissemaphore.test.RedisServer
import io.github.redissemaphore.test.RedisTest
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.CoroutineScope
import kotlinx.coroutines.CoroutineStart
import kotlinx.coroutines.Deferred
import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.async
import kotlinx.coroutines.awaitAll
import kotlinx.coroutines.cancelAndJoin
import kotlinx.coroutines.delay
import kotlinx.coroutines.flow.Flow
import kotlinx.coroutines.flow.collect
import kotlinx.coroutines.flow.first
import kotlinx.coroutines.flow.flow
import kotlinx.coroutines.flow.toList
import kotlinx.coroutines.launch
import kotlinx.coroutines.runBlocking
import kotlinx.coroutines.withTimeout
import org.assertj.core.api.Assertions.assertThat
import org.assertj.core.api.Assertions.assertThatThrownBy
import org.awaitility.Awaitility.await
import org.junit.jupiter.api.Test
import org.springframework.boot.test.context.runner.ApplicationContextRunner
import org.springframework.context.ApplicationContext
import java.time.Duration
import java.util.function.Supplier

/**
 * Kotlin `suspend` functions and `Flow` results hold their permit until the coroutine (the
 * collection) completes, across two instances on one Redis, and give it back on exception and on
 * cancellation. Spring AOP hands the advice of a `suspend fun` a publisher that is awaited only
 * after the advice has returned, so holding the permit "around the call" would hold nothing.
 */
@RedisTest
class CoroutineAspectTest(server: RedisServer) {

    private val occupancy = Occupancy()
    private val instance: ApplicationContextRunner = StarterContexts.on(server)
        .withPropertyValues(
            "distributed-semaphore.semaphores.kt-work.permits=1",
            "distributed-semaphore.semaphores.kt-work.wait-time=30s",
            "distributed-semaphore.semaphores.kt-flow.permits=1",
            "distributed-semaphore.semaphores.kt-flow.wait-time=30s",
            "distributed-semaphore.semaphores.kt-held.permits=1",
            "distributed-semaphore.semaphores.kt-held.wait-time=30s",
            "distributed-semaphore.semaphores.kt-no-wait.permits=1",
            // waits far longer than the tests' bounds: a waiter gone from the queue within them was taken out
            "distributed-semaphore.semaphores.kt-queued.permits=1",
            "distributed-semaphore.semaphores.kt-queued.wait-time=5m",
        )
        .withBean(Occupancy::class.java, Supplier { occupancy })
        .withBean(CoroutineService::class.java)

    @Test
    fun `a suspend fun never runs twice at once across two instances`() {
        instance.run { first ->
            instance.run { second ->
                val services = listOf(first, second).map { it.getBean(CoroutineService::class.java) }
                occupancy.expect(CALLERS)
                val results = runBlocking(Dispatchers.Default) {
                    (0 until CALLERS).map { i ->
                        async {
                            occupancy.started()
                            services[i % 2].work(i)
                        }
                    }.awaitAll()
                }
                assertThat(results).containsExactlyElementsOf((0 until CALLERS).map { "done $it" })
                assertThat(occupancy.max()).`as`("most calls inside at once").isEqualTo(1)
                assertThat(occupancy.inside()).isZero()
                awaitUsed(first, "kt-work", 0)
            }
        }
    }

    @Test
    fun `a Flow never runs twice at once across two instances`() {
        instance.run { first ->
            instance.run { second ->
                val services = listOf(first, second).map { it.getBean(CoroutineService::class.java) }
                occupancy.expect(CALLERS)
                val results = runBlocking(Dispatchers.Default) {
                    (0 until CALLERS).map { i ->
                        async {
                            occupancy.started()
                            services[i % 2].numbers(i).toList()
                        }
                    }.awaitAll()
                }
                assertThat(results).containsExactlyElementsOf((0 until CALLERS).map { listOf(it, -it) })
                assertThat(occupancy.max()).`as`("most collections inside at once").isEqualTo(1)
                awaitUsed(first, "kt-flow", 0)
            }
        }
    }

    @Test
    fun `a suspend fun gives the permit back when it throws`() {
        instance.run { context ->
            val service = context.getBean(CoroutineService::class.java)
            assertThatThrownBy { runBlocking { service.failing() } }
                .isInstanceOf(IllegalStateException::class.java).hasMessage("boom")
            awaitUsed(context, "kt-work", 0)
            assertThat(runBlocking { service.work(1) }).isEqualTo("done 1")
        }
    }

    @Test
    fun `a suspend fun gives the permit back when its coroutine is cancelled`() {
        instance.run { context ->
            val service = context.getBean(CoroutineService::class.java)
            runBlocking(Dispatchers.Default) {
                val entered = CompletableDeferred<Unit>()
                val holder = launch { service.hold(entered, CompletableDeferred()) }
                withTimeout(LIMIT_MS) { entered.await() }
                assertThat(state(context, "kt-held").used()).isEqualTo(1)

                // a second caller queues; cancelling it leaves the queue
                val waiter = launch(start = CoroutineStart.UNDISPATCHED) {
                    service.hold(CompletableDeferred(), CompletableDeferred())
                }
                await().until { state(context, "kt-held").waiters().size == 1 }
                waiter.cancelAndJoin()
                await().until { state(context, "kt-held").waiters().isEmpty() }

                holder.cancelAndJoin()
            }
            awaitUsed(context, "kt-held", 0)
        }
    }

    @Test
    fun `a Flow gives the permit back on exception and when its collector stops early`() {
        instance.run { context ->
            val service = context.getBean(CoroutineService::class.java)
            assertThatThrownBy { runBlocking { service.failingNumbers().toList() } }
                .isInstanceOf(IllegalStateException::class.java).hasMessage("flow boom")
            awaitUsed(context, "kt-flow", 0)

            // first() cancels the flow after one element, the rest never comes
            assertThat(runBlocking { service.endless().first() }).isEqualTo(0)
            awaitUsed(context, "kt-flow", 0)
        }
    }

    @Test
    fun `a Flow gives the permit back when the coroutine collecting it is cancelled`() {
        instance.run { context ->
            val service = context.getBean(CoroutineService::class.java)
            runBlocking(Dispatchers.Default) {
                val entered = CompletableDeferred<Unit>()
                val collector = launch { service.heldNumbers(entered, CompletableDeferred()).collect() }
                withTimeout(LIMIT_MS) { entered.await() }
                assertThat(state(context, "kt-queued").holders()).hasSize(1)

                // the flow is suspended inside, holding the permit: cancel the collector's Job
                collector.cancelAndJoin()
            }
            awaitNobodyIn(context, "kt-queued")
        }
    }

    @Test
    fun `a Flow whose collecting coroutine is cancelled while it waits leaves the queue`() {
        instance.run { context ->
            val service = context.getBean(CoroutineService::class.java)
            runBlocking(Dispatchers.Default) {
                val holderIn = CompletableDeferred<Unit>()
                val holderOut = CompletableDeferred<Unit>()
                val holder = async { service.heldNumbers(holderIn, holderOut).toList() }
                withTimeout(LIMIT_MS) { holderIn.await() }

                val waiterIn = CompletableDeferred<Unit>()
                val waiter = launch { service.heldNumbers(waiterIn, CompletableDeferred()).collect() }
                await().atMost(LIMIT).until { state(context, "kt-queued").waiters().size == 1 }
                waiter.cancelAndJoin()
                await().atMost(LIMIT).until { state(context, "kt-queued").waiters().isEmpty() }
                assertThat(waiterIn.isCompleted).`as`("the cancelled waiter's flow has started").isFalse()
                assertThat(state(context, "kt-queued").used()).`as`("the holder still holds").isEqualTo(1)

                holderOut.complete(Unit)
                assertThat(withTimeout(LIMIT_MS) { holder.await() }).containsExactly(1)
            }
            awaitNobodyIn(context, "kt-queued")
        }
    }

    @Test
    fun `a rejected suspend fun gets its suspending fallback, or the rejection`() {
        instance.run { context ->
            val service = context.getBean(CoroutineService::class.java)
            runBlocking(Dispatchers.Default) {
                val entered = CompletableDeferred<Unit>()
                val release = CompletableDeferred<Unit>()
                val holder = async { service.noWait(entered, release) }
                withTimeout(LIMIT_MS) { entered.await() }

                assertThat(service.noWaitOrFallback(CompletableDeferred(), CompletableDeferred()))
                    .isEqualTo("fallback: kt-no-wait")
                assertThatThrownBy { runBlocking { service.noWait(CompletableDeferred(), CompletableDeferred()) } }
                    .isInstanceOf(SemaphoreRejectedException::class.java)
                release.complete(Unit)
                assertThat(holder.await()).isEqualTo("released")
            }
            awaitUsed(context, "kt-no-wait", 0)
        }
    }

    @Test
    fun `a suspend fun returning a Flow holds the permit until the collection completes`() {
        instance.run { context ->
            val service = context.getBean(CoroutineService::class.java)
            runBlocking(Dispatchers.Default) {
                val entered = CompletableDeferred<Unit>()
                val release = CompletableDeferred<Unit>()
                val collected = async { service.heldFlow(entered, release).toList() }
                withTimeout(LIMIT_MS) { entered.await() }
                assertThat(state(context, "kt-held").used()).isEqualTo(1)
                release.complete(Unit)
                assertThat(collected.await()).containsExactly(1)
            }
            awaitUsed(context, "kt-held", 0)
        }
    }

    @Test
    fun `a Deferred starts its work only once the permit is held, and holds it until it completes`() {
        instance.run { context ->
            val service = context.getBean(CoroutineService::class.java)
            runBlocking(Dispatchers.Default) {
                val firstIn = CompletableDeferred<Unit>()
                val firstOut = CompletableDeferred<Unit>()
                val first = service.later(firstIn, firstOut)
                withTimeout(LIMIT_MS) { firstIn.await() }
                awaitUsed(context, "kt-held", 1)

                val secondIn = CompletableDeferred<Unit>()
                val second = service.later(secondIn, CompletableDeferred(Unit))
                await().until { state(context, "kt-held").waiters().size == 1 }
                // a Deferred runs from the start: the method must not have been called yet
                assertThat(secondIn.isCompleted).`as`("the waiting call has started").isFalse()
                firstOut.complete(Unit)
                assertThat(first.await()).isEqualTo("later")
                assertThat(second.await()).isEqualTo("later")
            }
            awaitUsed(context, "kt-held", 0)
        }
    }

    @Test
    fun `the fallback of a suspend fun must be a suspend fun, else the first call says so`() {
        instance.run { context ->
            val service = context.getBean(CoroutineService::class.java)
            assertThatThrownBy { runBlocking { service.plainFallback() } }
                .isInstanceOf(IllegalArgumentException::class.java)
                .hasMessage(
                    "Invalid fallbackMethod of @DistributedSemaphore on CoroutineService.plainFallback(Continuation):"
                        + " fallbackMethod 'plainBusy' not found: " + CoroutineService::class.java.name
                        + " has no suspend function plainBusy() or plainBusy(SemaphoreRejectedException)",
                )
        }
    }

    private fun awaitUsed(context: ApplicationContext, semaphore: String, used: Int) {
        await().untilAsserted { assertThat(state(context, semaphore).used()).isEqualTo(used) }
    }

    /** No permit used, no holder and no waiter left in Redis. */
    private fun awaitNobodyIn(context: ApplicationContext, semaphore: String) {
        await().atMost(LIMIT).untilAsserted {
            val state = state(context, semaphore)
            assertThat(state.used()).isZero()
            assertThat(state.holders()).isEmpty()
            assertThat(state.waiters()).isEmpty()
        }
    }

    private fun state(context: ApplicationContext, semaphore: String): SemaphoreState =
        context.getBean(SemaphoreRegistry::class.java).semaphore(semaphore).state()

    /** Open (and its methods): Spring proxies it by subclassing. */
    open class CoroutineService(private val occupancy: Occupancy) {

        /** Inside until every caller has called, so a missing limit lets them in meanwhile. */
        protected suspend fun visit() {
            occupancy.enter()
            try {
                while (!occupancy.allStarted()) {
                    delay(5)
                }
                delay(20)
            } finally {
                occupancy.exit()
            }
        }

        @DistributedSemaphore("kt-work")
        open suspend fun work(i: Int): String {
            visit()
            return "done $i"
        }

        @DistributedSemaphore("kt-work")
        open suspend fun failing(): String {
            delay(1)
            throw IllegalStateException("boom")
        }

        @DistributedSemaphore("kt-held")
        open suspend fun hold(entered: CompletableDeferred<Unit>, release: CompletableDeferred<Unit>): String {
            entered.complete(Unit)
            release.await()
            return "released"
        }

        @DistributedSemaphore("kt-held")
        open suspend fun heldFlow(entered: CompletableDeferred<Unit>, release: CompletableDeferred<Unit>): Flow<Int> {
            delay(1)
            return flow {
                entered.complete(Unit)
                release.await()
                emit(1)
            }
        }

        @DistributedSemaphore("kt-queued")
        open fun heldNumbers(entered: CompletableDeferred<Unit>, release: CompletableDeferred<Unit>): Flow<Int> = flow {
            entered.complete(Unit)
            release.await()
            emit(1)
        }

        @DistributedSemaphore("kt-held")
        open fun later(entered: CompletableDeferred<Unit>, release: CompletableDeferred<Unit>): Deferred<String> =
            CoroutineScope(Dispatchers.Default).async {
                entered.complete(Unit)
                release.await()
                "later"
            }

        @DistributedSemaphore("kt-no-wait")
        open suspend fun noWait(entered: CompletableDeferred<Unit>, release: CompletableDeferred<Unit>): String =
            hold(entered, release)

        @DistributedSemaphore(value = "kt-no-wait", fallbackMethod = "busy")
        open suspend fun noWaitOrFallback(entered: CompletableDeferred<Unit>, release: CompletableDeferred<Unit>): String =
            hold(entered, release)

        open suspend fun busy(
            entered: CompletableDeferred<Unit>,
            release: CompletableDeferred<Unit>,
            rejection: SemaphoreRejectedException,
        ): String {
            delay(1)
            return "fallback: " + rejection.semaphoreName
        }

        @DistributedSemaphore(value = "kt-work", fallbackMethod = "plainBusy")
        open suspend fun plainFallback(): String = "never"

        open fun plainBusy(): String = "not a suspend fun"

        @DistributedSemaphore("kt-flow")
        open fun numbers(i: Int): Flow<Int> = flow {
            visit()
            emit(i)
            emit(-i)
        }

        @DistributedSemaphore("kt-flow")
        open fun failingNumbers(): Flow<Int> = flow {
            emit(1)
            throw IllegalStateException("flow boom")
        }

        @DistributedSemaphore("kt-flow")
        open fun endless(): Flow<Int> = flow {
            var i = 0
            while (true) {
                emit(i++)
            }
        }
    }

    private companion object {
        const val CALLERS = 6
        const val LIMIT_MS = 30_000L
        val LIMIT: Duration = Duration.ofMillis(LIMIT_MS)
    }
}
