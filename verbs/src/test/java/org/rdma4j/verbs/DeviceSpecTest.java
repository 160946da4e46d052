// SPDX-License-Identifier: Apache-2.0
package org.rdma4j.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class DeviceSpecTest {
    @Test
    void providerKindAndOptionsAreRead() {
        DeviceSpec s = DeviceSpec.parse("soft:udp?addr=fd77::2&mode=raw&port=4791");
        assertEquals("soft", s.provider());
        assertEquals("udp", s.kind());
        assertEquals("fd77::2", s.option("addr"));
        assertEquals(List.of("addr", "mode", "port"), List.copyOf(s.options().keySet()));
        assertNull(s.option("name"));
        assertEquals("udp0", s.option("name", "udp0"));
    }

    @Test
    void kindAndOptionsMayBeLeftOut() {
        assertEquals(new DeviceSpec("soft", "", Map.of()), DeviceSpec.parse("soft"));
        assertEquals(new DeviceSpec("soft", "", Map.of("name", "x")), DeviceSpec.parse("soft?name=x"));
        assertEquals("", DeviceSpec.parse("soft:loopback?flag").option("flag"));
    }

    @Test
    void toStringIsWhatParseReads() {
        String text = "soft:udp?addr=10.0.0.1&mode=raw";
        assertEquals(text, DeviceSpec.parse(text).toString());
        DeviceSpec built = DeviceSpec.of("soft", "udp").with("addr", "10.0.0.1").with("mode", "raw");
        assertEquals(text, built.toString());
        assertEquals(built, DeviceSpec.parse(built.toString()));
    }

    @Test
    void malformedSpecsAreEinval() {
        for (String bad : new String[] {"", ":udp", "soft?=1", "soft?a=1&a=2", "soft:udp?a=1&&b=2", "soft:a:b"}) {
            VerbsException e = assertThrows(VerbsException.class, () -> DeviceSpec.parse(bad), bad);
            assertEquals(Errno.EINVAL, e.errno(), bad);
        }
        assertThrows(VerbsException.class, () -> DeviceSpec.of("soft", "udp").with("addr", "a&b"));
    }
}
