package abi_test

import (
	"fmt"

	"github.com/archc/archc/formats/abi"
)

// A hybrid model's table (qwen3_next's fixture at max_len 256): one KV
// cache, a conv window and a recurrent state, each with its rules.
func ExampleStateTable() {
	t := abi.StateTable{
		{Kind: abi.KVCache, Global: "kv_cache", Entries: 2, Shape: []int64{2, 16}, DType: "f32", Positions: 256, Buffers: 1, BytesPerToken: 256, BytesPerSlot: 65536,
			Reset: abi.ResetUnread, Padding: abi.PadPastHeld, Copy: abi.CopyCacheName(64), Snapshot: abi.SnapshotEveryPosition},
		{Kind: abi.Window, Global: "state", Entries: 2, Shape: []int64{3, 80}, DType: "f32", Buffers: 2, BytesPerSlot: 3840,
			Reset: abi.ResetZero, Padding: abi.PadOtherBuffer, Copy: abi.CopyStateName, Snapshot: abi.SnapshotParity},
		{Kind: abi.Recurrent, Global: "state_1", Entries: 2, Shape: []int64{4, 8, 12}, DType: "f32", Buffers: 2, BytesPerSlot: 6144,
			Reset: abi.ResetZero, Padding: abi.PadOtherBuffer, Copy: abi.CopyStateName, Snapshot: abi.SnapshotParity},
	}
	fmt.Println(t.FixedState(), t.BytesPerToken(), t.FixedBytesPerSlot(), t.BytesPerSlot(256))
	fmt.Println(t.Summary(4, 256))
	fmt.Print(t.Format())
	fmt.Println(abi.StateTable{}.Summary(1, 4096), abi.StateTable{{Kind: abi.KVCache}}.FixedState())
	// Output:
	// true 256 9984 75520
	// state: 295.0 KiB in 4 slots of 256 tokens (KV cache 256 B per token, fixed state 9.8 KiB per slot)
	// kind       global    entries  shape     dtype  bytes/token  bytes/slot  reset   padding       copy           snapshot
	// kv-cache   kv_cache  2        [2 16]    f32    256          65536       unread  past-held     copy_cache_64  every-position
	// window     state     2        [3 80]    f32    -            3840        zero    other-buffer  copy_state     parity
	// recurrent  state_1   2        [4 8 12]  f32    -            6144        zero    other-buffer  copy_state     parity
	// state: none false
}

func ExampleFormatBytes() {
	fmt.Println(abi.FormatBytes(768), abi.FormatBytes(1536), abi.FormatBytes(16<<30), abi.FormatBytes(340<<20))
	// Output: 768 B 1.5 KiB 16.0 GiB 340.0 MiB
}
