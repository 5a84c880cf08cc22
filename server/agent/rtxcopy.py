"""Each retransmission the viewer asks for goes out twice, COPY_AFTER_MS apart.

A lost video packet is repaired within a round trip: the viewer's NACK, the agent's retransmission (RTX). When that
retransmission is lost too, Chrome asks again only after its own round-trip estimate, which starts at 100 ms (WebRTC's
NACK module) and a viewer that sends no media has nothing to measure it by, and the picture has frozen by then: in
bench:stream at 0.5% loss each way, the runs with a freeze (about 180 ms, no PLI) were those where a NACK went
unanswered (NACK 13 / RTX 12, 9 / 7), and no run where every NACK was answered froze. A copy COPY_AFTER_MS after the
first (outside a burst that took the first) leaves a lost retransmission at loss squared, for one packet more per lost
one. A lost NACK, the other half of those freezes, is not seen by the agent.

rtpsession turns the viewer's NACK into an upstream GstRTPRetransmissionRequest event into rtprtxsend (webrtcbin
makes one per session with do-nack); a probe on its src pad sends the same request again COPY_AFTER_MS later, marked
so that the copy is not copied.
"""
COPY_AFTER_MS = 10
REQUEST = 'GstRTPRetransmissionRequest'
MARK = 'hyperdesk-copy'


def wants_copy(name, has_field):
    """Whether an upstream event named `name` is a viewer's request to copy (has_field(name) -> bool on its fields)."""
    return name == REQUEST and not has_field(MARK)


def copy_requests(pipe, Gst, GLib, log):
    """Copies every retransmission request that reaches an rtprtxsend in `pipe`, now or once webrtcbin makes it;
    `log` says when a probe is on."""

    def send(pad, fields):
        pad.send_event(Gst.Event.new_custom(Gst.EventType.CUSTOM_UPSTREAM, fields))
        return False

    def on_event(pad, info):
        event = info.get_event()
        fields = event.get_structure() if event is not None and event.type == Gst.EventType.CUSTOM_UPSTREAM else None
        if fields is not None and wants_copy(fields.get_name(), fields.has_field):
            copy = fields.copy()
            copy.set_value(MARK, True)
            GLib.timeout_add(COPY_AFTER_MS, send, pad, copy)
        return Gst.PadProbeReturn.OK

    def watch(element):
        factory = element.get_factory()
        if factory is not None and factory.get_name() == 'rtprtxsend':
            element.get_static_pad('src').add_probe(Gst.PadProbeType.EVENT_UPSTREAM, on_event)
            log('retransmissions sent twice, %d ms apart' % COPY_AFTER_MS)

    pipe.connect('deep-element-added', lambda _bin, _sub, element: watch(element))
    it = pipe.iterate_recurse()
    while True:
        ok, element = it.next()
        if ok != Gst.IteratorResult.OK:
            break
        watch(element)
