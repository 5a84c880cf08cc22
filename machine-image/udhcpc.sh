#!/bin/sh
# busybox udhcpc's hook: applies the bridge's lease to eth0 (address, default route, DNS).
case "$1" in
  deconfig) ip -4 addr flush dev "$interface" ;;
  bound|renew)
    ip -4 addr flush dev "$interface"
    ip -4 addr add "$ip/${mask:-24}" dev "$interface"
    [ -n "${router:-}" ] && ip -4 route replace default via "${router%% *}" dev "$interface"
    : > /run/resolv.conf.new
    for s in ${dns:-}; do echo "nameserver $s" >> /run/resolv.conf.new; done
    mv /run/resolv.conf.new /run/resolv.conf
    ;;
esac
exit 0
