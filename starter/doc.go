// Package starter will hold azolla's client side: creating objectives,
// approving, rejecting and retrying them, and querying their state. Empty
// until the lifecycle lands.
package starter
