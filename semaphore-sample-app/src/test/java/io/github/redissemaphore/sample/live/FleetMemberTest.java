package io.github.redissemaphore.sample.live;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

/** Which instance a holder or waiter belongs to, from the owner the library records. */
class FleetMemberTest {

    private static final FleetMember A = new FleetMember("A", "http://localhost:41003", "vm", 28039, 41003,
            "http-nio-auto-1-exec-");
    private static final FleetMember B = new FleetMember("B", "http://localhost:43617", "vm", 28039, 43617,
            "http-nio-auto-2-exec-");
    private static final FleetMember ELSEWHERE = new FleetMember("C", "http://other:8080", "other", 7, 8080,
            "http-nio-8080-exec-");

    @Test
    void instancesOfOneJvmAreToldApartByTheirRequestThreads() {
        List<FleetMember> fleet = List.of(A, B, ELSEWHERE);
        assertThat(FleetMember.nameOf("vm/28039/http-nio-auto-1-exec-11", fleet)).hasValue("A");
        assertThat(FleetMember.nameOf("vm/28039/http-nio-auto-2-exec-3", fleet)).hasValue("B");
        // a pool whose prefix only starts like A's is not A's
        assertThat(FleetMember.nameOf("vm/28039/http-nio-auto-12-exec-3", fleet)).isEmpty();
        assertThat(FleetMember.nameOf("vm/28039/http-nio-auto-1-exec-", fleet)).isEmpty();
        assertThat(FleetMember.nameOf("vm/28039/main", fleet)).as("not a request thread").isEmpty();
    }

    @Test
    void instancesInProcessesOfTheirOwnAreToldApartByHostAndPid() {
        List<FleetMember> fleet = List.of(A, ELSEWHERE);
        assertThat(FleetMember.nameOf("other/7/any-thread", fleet)).hasValue("C");
        assertThat(FleetMember.nameOf("vm/28039/pool-4-thread-1", fleet)).as("the only member of that process")
                .hasValue("A");
        assertThat(FleetMember.nameOf("vm/280391/http-nio-auto-1-exec-1", fleet)).as("another pid").isEmpty();
        assertThat(FleetMember.nameOf("someone/1/x", fleet)).isEmpty();
    }

    @Test
    void aMemberSurvivesItsEncodingAndAnythingElseIsSkipped() {
        assertThat(FleetMember.decode(A.encode())).hasValue(A);
        FleetMember unknownThreads = new FleetMember("D", "http://localhost:1", "vm", 1, 1, "");
        assertThat(FleetMember.decode(unknownThreads.encode())).hasValue(unknownThreads);
        assertThat(FleetMember.decode("A\thttp://x\tvm\tnot-a-pid\t1\t")).isEmpty();
        assertThat(FleetMember.decode("garbage")).isEmpty();
    }
}
