"""AIMD bitrate control from RTCP receiver reports: back off fast on loss, probe up slowly while clean."""

# Caps in kbit/s. Auto keeps the whole stream under 2 Mbit/s with room for RTP/RTCP and audio overhead.
QUALITY_KBPS = {'auto': 1600, 'low': 500, 'medium': 1000, 'high': 3000}
MIN_KBPS = 250
STEP_KBPS = 80


class Aimd:
    def __init__(self, quality='auto'):
        self.cap = QUALITY_KBPS[quality]
        self.kbps = self.cap

    def set_quality(self, quality):
        self.cap = QUALITY_KBPS[quality]
        self.kbps = self.cap

    def update(self, fraction_lost, rtt_s):
        """One RTCP report; True when the bitrate changed."""
        before = self.kbps
        if fraction_lost > 0.05 or rtt_s > 0.5:
            self.kbps = max(MIN_KBPS, int(self.kbps * 0.7))
        elif fraction_lost < 0.02:
            self.kbps = min(self.cap, self.kbps + STEP_KBPS)
        return self.kbps != before
