print("readerctl")
