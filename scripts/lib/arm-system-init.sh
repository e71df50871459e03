#!/bin/busybox sh
# /init of the emulated arm64 system's initramfs (scripts/test-arm-system.sh). Busybox only:
# loads the virtio block driver (a module in Debian's cloud kernel), mounts the root disk that
# holds lockprof, its tests, bash, objdump and their libraries, runs the stage script in it,
# writes the stage's outputs as a tar onto the output disk and powers off. The host reads the
# tar; nothing else leaves the guest.
/bin/busybox mkdir -p /proc /sys /dev /newroot
/bin/busybox mount -t proc proc /proc
/bin/busybox mount -t sysfs sys /sys
/bin/busybox mount -t devtmpfs dev /dev
for module in virtio_ring virtio virtio_mmio virtio_blk; do
    /bin/busybox insmod "/modules/$module.ko" || echo "arm-system-init: insmod $module failed"
done

# The disks are told apart by their virtio serial numbers, not by probe order.
disk_with_serial() {
    for block in /sys/block/vd*; do
        [ "$(/bin/busybox cat "$block/serial" 2>/dev/null)" = "$1" ] && {
            echo "/dev/${block##*/}"
            return 0
        }
    done
    return 1
}
tries=0
while ! root_disk=$(disk_with_serial lockprof-root) || ! out_disk=$(disk_with_serial lockprof-out); do
    tries=$((tries + 1))
    if [ $tries -gt 50 ]; then
        echo "arm-system-init: FAILED: the root or output disk did not appear"
        /bin/busybox poweroff -f
    fi
    /bin/busybox sleep 0.1
done

model=$(/bin/busybox sed -n 's/.*lockprof.model=\([^ ]*\).*/\1/p' /proc/cmdline)
echo "arm-system-init: root $root_disk, outputs to $out_disk"
/bin/busybox mount -t ext4 -o ro "$root_disk" /newroot
for fs in proc sys dev; do /bin/busybox mount --move "/$fs" "/newroot/$fs"; done
# A writable /tmp over the read-only root. The build may itself live under /tmp (a CI clone
# in /tmp/...): its folders are bound back into the new /tmp from below.
/bin/busybox mkdir -p /lower-tmp
/bin/busybox mount --bind /newroot/tmp /lower-tmp
/bin/busybox mount -t tmpfs -o size=1g tmpfs /newroot/tmp
for entry in /lower-tmp/*; do
    [ -d "$entry" ] || continue
    /bin/busybox mkdir -p "/newroot/tmp/${entry##*/}"
    /bin/busybox mount --bind "$entry" "/newroot/tmp/${entry##*/}"
done
/bin/busybox mkdir -p /newroot/tmp/out
echo "arm-system-init: stage for $model starting"
/bin/busybox chroot /newroot /bin/bash /stage/guest.sh "$model" /tmp/out \
    >/newroot/tmp/out/stage.log 2>&1
echo "rc=$?" >>/newroot/tmp/out/stage.log
/bin/busybox tar cf "/newroot$out_disk" -C /newroot/tmp/out .
/bin/busybox sync
echo "arm-system-init: stage for $model done"
/bin/busybox poweroff -f
