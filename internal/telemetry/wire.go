package telemetry

import "encoding/binary"

// The protobuf wire format, the four pieces OTLP needs. Written here
// rather than imported: google.golang.org/protobuf's protowire brings a
// package that reads malarun's own binary at every start (internal/detrand)
// to seed its randomness, whether telemetry is on or not.

// fieldNum is a protobuf field number.
type fieldNum uint32

// The wire types malarun writes.
const (
	wireVarint  = 0
	wireFixed64 = 1
	wireBytes   = 2
	wireFixed32 = 5
)

func appendTag(b []byte, num fieldNum, wireType uint64) []byte {
	return appendUvarint(b, uint64(num)<<3|wireType)
}

func appendUvarint(b []byte, v uint64) []byte {
	return binary.AppendUvarint(b, v)
}

func appendLenBytes(b, v []byte) []byte {
	return append(appendUvarint(b, uint64(len(v))), v...)
}

func appendFixed64Raw(b []byte, v uint64) []byte {
	return binary.LittleEndian.AppendUint64(b, v)
}

func appendFixed32Raw(b []byte, v uint32) []byte {
	return binary.LittleEndian.AppendUint32(b, v)
}

func boolVarint(v bool) uint64 {
	if v {
		return 1
	}
	return 0
}
