#!/usr/bin/env python3
"""probe_dump.py - prints the records of a proftop session file, one line
each: ring tid kind name start_ns dur_ns arg aux. A tiny independent reader
of include/proftop/shm.h used by tests/e2e/test_probe.sh (it checks the
layout from the outside, without proftop's own session reader)."""
import struct
import sys

HDR = struct.Struct('<QIIQiIQQQIIQQQIIqqqIIQQiIQQQ1024s')
REC = struct.Struct('<QQQIBBH')
RING_BYTES = 320  # head, tail, counters and name, per-reader cursors (shm.h, ABI 2)
MAGIC = 0x3150544F46545250


def main(path):
    data = open(path, 'rb').read()
    h = HDR.unpack_from(data, 0)
    (magic, abi, hbytes, seg, pid, uid, start_ticks, origin, rt, nrings, slots, roff, stride,
     soff, sbytes, _r0, rank, lrank, wsize, state, claimed, sused, hb, rpid, _r1, dnr, dns,
     exit_ns, cmd) = h
    assert magic == MAGIC, 'bad magic'
    assert seg == len(data), 'segment_bytes %d != file %d' % (seg, len(data))
    print('header pid=%d abi=%d state=%d nrings=%d slots=%d claimed=%d strings_used=%d '
          'dropped_no_ring=%d dropped_no_string=%d cmdline=%s' %
          (pid, abi, state, nrings, slots, claimed, sused, dnr, dns,
           cmd.split(b'\0')[0].decode(errors='replace')))

    def name(off):
        if off == 0:
            return ''
        assert off % 8 == 0 and off + 8 <= sbytes, 'bad name offset %d' % off
        ln, _hash = struct.unpack_from('<II', data, soff + off)
        b = data[soff + off + 8:soff + off + 8 + ln]
        assert data[soff + off + 8 + ln] == 0, 'name not NUL-terminated'
        return b.decode(errors='replace')

    for i in range(nrings):
        base = roff + i * stride
        head, = struct.unpack_from('<Q', data, base)
        tail, = struct.unpack_from('<Q', data, base + 64)
        dropped, over, rstate, tid, gen = struct.unpack_from('<QQIiI', data, base + 128)
        tname = data[base + 160:base + 192].split(b'\0')[0].decode(errors='replace')
        if gen == 0:
            continue
        print('ring %d tid=%d state=%d gen=%d head=%d tail=%d dropped=%d overwritten=%d name=%s'
              % (i, tid, rstate, gen, head, tail, dropped, over, tname))
        for idx in range(max(tail, head - slots), head):
            s, d, arg, off, kind, flags, aux = REC.unpack_from(
                data, base + RING_BYTES + (idx % slots) * 32)
            print('rec %d %d kind=%d name=%s start=%d dur=%d arg=%d aux=%d' %
                  (i, tid, kind, name(off), s, d, arg, aux))


if __name__ == '__main__':
    main(sys.argv[1])
